/**
 * The `--help` texts of the program and its commands.
 *
 * @module
 */

const CONNECTION = `Connection (as kubectl):
      --kubeconfig PATH      the kubeconfig file (default: KUBECONFIG, else ~/.kube/config)
      --context NAME         the kubeconfig context (default: its current-context)
      --server URL           a plain HTTP(S) API server without credentials, e.g.
                             kubectl proxy's http://127.0.0.1:8001 (excludes the two above)
  In a pod (KUBERNETES_SERVICE_HOST set, no kubeconfig named): the service account.`;

const SELECTION =
  `  -n, --namespace NS         the namespace (default: the context's, else "default")
  -A, --all-namespaces       every namespace
  -l, --selector SELECTOR    a label selector (app=web,tier!=db)
      --field-selector SEL   a field selector (status.phase=Running)`;

const EXIT_CODES =
  `Exit codes: 0 ok; 1 failure (server unreachable, request refused, catch-up failed,
  an unknown resource while some API groups could not be discovered);
  2 usage error (bad flag, missing argument, NAME with -A); 3 unknown resource or verb not served;
  130 interrupted by Ctrl-C (get, changes).`;

const OUTPUT =
  `  -o, --output FORMAT        table (default: the server's columns), wide (every column),
                             json, ndjson (one JSON line each), name (kind.group/name)`;

/** The program's help. */
export const MAIN_HELP =
  `kube-reflector: watch, get and catch up on Kubernetes objects with kubectl's names.

Usage: kube-reflector COMMAND [flags]

Commands:
  watch RESOURCE [NAME]      print each change live, until Ctrl-C
  get RESOURCE [NAME]        list and print the objects
  changes RESOURCE --state DIR
                             print the changes since the last run (ndjson), for cron
  demo                       a live demo on an embedded test API server, no cluster needed
  help [COMMAND]             this help, or a command's

RESOURCE is what kubectl accepts: pods, po, pod, Deployment.apps, deploy, a CRD's names...

Run 'kube-reflector COMMAND --help' for a command's flags.

${EXIT_CODES}
`;

/** `watch --help`. */
export const WATCH_HELP = `Usage: kube-reflector watch RESOURCE [NAME] [flags]

Prints the objects, then each change as it happens (ADDED, MODIFIED, DELETED), until Ctrl-C.
It runs an informer: it recovers from dropped connections, expired versions and relists.
With -o table, the columns are the server's (one request for a change's row);
without a server Table: NAMESPACE, NAME and AGE.

${SELECTION}
${OUTPUT}
      --metrics-port N       serve the informer's Prometheus metrics on
                             http://127.0.0.1:N/metrics (0: any free port; needs prom-client)
  -h, --help                 this help

${CONNECTION}

${EXIT_CODES}
Ctrl-C ends a watch normally (exit 0).
`;

/** `get --help`. */
export const GET_HELP = `Usage: kube-reflector get RESOURCE [NAME] [flags]

Lists the objects (in pages of 500) and prints them. With -o table, the server's
columns (a Table list, as kubectl asks); without a server Table: NAMESPACE, NAME and AGE.
A long list shows its progress on stderr when stderr is a terminal. With NAME, one GET
of that object (the get permission suffices; no selector with NAME).

${SELECTION}
${OUTPUT}
  -h, --help                 this help

${CONNECTION}

${EXIT_CODES}
`;

/** `changes --help`. */
export const CHANGES_HELP = `Usage: kube-reflector changes RESOURCE --state DIR [flags]

Prints the changes since the last run, one JSON line each:
  {"type":"ADDED"|"MODIFIED"|"DELETED","object":{...}}
and saves a checkpoint in DIR (created if missing) for the next run. The first run
(no checkpoint yet) prints every object as ADDED. Made for cron: it exits 0 when it caught up.

      --state DIR            where the checkpoint is kept (required)
      --budget DURATION      the longest catching up may take (default 60s; 30s, 2m, 1500ms)
${SELECTION}
  -h, --help                 this help

${CONNECTION}

${EXIT_CODES}
A run that could not catch up within the budget, or could not save its checkpoint,
prints what it got and exits 1; the next run goes on from what was saved. At least
once: the checkpoint is saved only after every line was written; a run whose output
cannot be written (a closed pipe) exits 1 and the next run prints those changes again.
`;
