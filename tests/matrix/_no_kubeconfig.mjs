// Stands in for kube-reflector/kubeconfig (esbuild --alias) when bundling
// that entry point for an edge runtime fails: the core checks still run,
// and the TLS row reports the bundling error the driver passes in.
export {};
