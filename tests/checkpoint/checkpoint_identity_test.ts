import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  type CheckpointIdentity,
  identityMismatch,
} from "../../src/checkpoint/checkpoint_identity.ts";

const BASE: CheckpointIdentity = {
  server: "https://k8s.example.com:6443",
  apiVersion: "apps/v1",
  resource: "deployments",
};

test("identityMismatch finds identical identities matching", () => {
  assert.equal(identityMismatch(BASE, { ...BASE }), undefined);
  const full = {
    ...BASE,
    namespace: "a",
    labelSelector: "x=y",
    fieldSelector: "f=g",
    metadataOnly: true,
    cluster: "u",
  };
  assert.equal(identityMismatch(full, { ...full }), undefined);
});

test("identityMismatch normalizes selectors, namespace, metadataOnly and server", () => {
  const same: [Partial<CheckpointIdentity>, Partial<CheckpointIdentity>][] = [
    [{ labelSelector: " app=web " }, { labelSelector: "app=web" }],
    [{ labelSelector: "" }, { labelSelector: undefined }],
    [{ fieldSelector: "  " }, {}],
    [{ namespace: "" }, {}],
    [{ metadataOnly: false }, {}],
    [{ server: "https://K8S.example.com:6443/" }, {}],
    [{ server: "https://k8s.example.com:6443?x=1#frag" }, {}],
    [{ server: "https://user:pass@k8s.example.com:6443" }, {}],
    [{ cluster: "uid-1" }, {}], // compared only when both sides have one
    [{}, { cluster: "uid-1" }],
  ];
  for (const [a, b] of same) {
    assert.equal(
      identityMismatch({ ...BASE, ...a }, { ...BASE, ...b }),
      undefined,
      JSON.stringify([a, b]),
    );
  }
});

test("identityMismatch names the first differing field and both values", () => {
  const cases: [Partial<CheckpointIdentity>, Partial<CheckpointIdentity>, string][] = [
    [{ cluster: "a" }, { cluster: "b" }, 'cluster differs: the checkpoint has "a", expected "b"'],
    [
      {},
      { server: "https://other:6443" },
      'server differs: the checkpoint has "https://k8s.example.com:6443", expected "https://other:6443"',
    ],
    [
      {},
      { apiVersion: "apps/v2" },
      'apiVersion differs: the checkpoint has "apps/v1", expected "apps/v2"',
    ],
    [
      {},
      { resource: "statefulsets" },
      'resource differs: the checkpoint has "deployments", expected "statefulsets"',
    ],
    [{ namespace: "a" }, {}, 'namespace differs: the checkpoint has "a", expected ""'],
    [{}, { fieldSelector: "x=1" }, 'fieldSelector differs: the checkpoint has "", expected "x=1"'],
    [{ metadataOnly: true }, {}, "metadataOnly differs: the checkpoint has true, expected false"],
    [
      { cluster: "a", resource: "pods" },
      { cluster: "b" },
      'cluster differs: the checkpoint has "a", expected "b"',
    ],
  ];
  for (const [a, b, message] of cases) {
    assert.equal(identityMismatch({ ...BASE, ...a }, { ...BASE, ...b }), message);
  }
});

test("identityMismatch never shows the server's credentials", () => {
  const message = identityMismatch(
    { ...BASE, server: "https://admin:hunter2@a.example.com/?token=abc" },
    { ...BASE, server: "https://admin:hunter2@b.example.com" },
  );
  assert.ok(message);
  assert.doesNotMatch(message, /hunter2|admin|token/);
});
