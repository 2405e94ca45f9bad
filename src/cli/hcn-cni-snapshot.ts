/**
 * The entry of the executable's V8 start-up snapshot (scripts/package.js, Node SEA "useSnapshot"). At build time
 * this module runs inside the snapshot builder: it evaluates the modules an ADD or DEL needs (the protocol layer, the
 * plugin, the audit, the state, the HNS facade, pino), so that their code is compiled and their module state built
 * into the snapshot, and registers main() to run when the executable starts. Nothing here may touch the process's
 * own environment, stdin, the addon or HNS: whatever it does is frozen into every later start. The addon is loaded
 * at run time, as before (src/hns/native.ts); Math.random is reseeded by V8 on deserialization.
 */
import * as v8 from 'node:v8';
import 'pino';
import '../run';
import '../plugin/handlers';
import '../plugin/add';
import '../plugin/del';
import '../orphans/audit';
import '../state/store';
import '../hns/hcn';
import '../hns/api';
import '../log/logger';
import { main } from './hcn-cni';

v8.startupSnapshot.setDeserializeMainFunction(main);
