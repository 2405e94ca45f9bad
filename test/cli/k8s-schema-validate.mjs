// Validates Kubernetes manifests against Kubernetes' own OpenAPI schemas, as shipped offline by the npm package
// kubernetes-models (generated from the Kubernetes API's swagger; validation with ajv). ESM only, hence a child
// process of the (CommonJS) test: node test/cli/k8s-schema-validate.mjs FILE.yaml prints one JSON line per document,
// {kind, name, ok, error?}.
import * as fs from 'node:fs';
import { parseAllDocuments } from 'yaml';

const GROUPS = {
  v1: 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'rbac.authorization.k8s.io/v1': 'kubernetes-models/rbac.authorization.k8s.io/v1',
};

for (const file of process.argv.slice(2)) {
  for (const d of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
    const doc = d.toJS();
    const where = GROUPS[doc.apiVersion];
    const out = { file, kind: doc.kind, name: doc.metadata?.name };
    if (!where) {
      console.log(JSON.stringify({ ...out, ok: false, error: `no schema for apiVersion ${doc.apiVersion}` }));
      continue;
    }
    const Model = (await import(where))[doc.kind];
    if (!Model) {
      console.log(JSON.stringify({ ...out, ok: false, error: `no schema for ${doc.apiVersion} ${doc.kind}` }));
      continue;
    }
    try {
      new Model(doc).validate();
      console.log(JSON.stringify({ ...out, ok: true }));
    } catch (e) {
      console.log(JSON.stringify({ ...out, ok: false, error: String(e.message) }));
    }
  }
}
