/** A judge / user-simulator worker: one frozen generator behind comlink. */
import * as Comlink from 'comlink';
import { GeneratorHost } from './generator-host';

Comlink.expose(new GeneratorHost());
