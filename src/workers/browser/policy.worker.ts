/** The policy worker: the engine behind comlink. */
import * as Comlink from 'comlink';
import { PolicyHost } from './policy-host';

Comlink.expose(new PolicyHost());
