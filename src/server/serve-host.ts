/**
 * Which names a request's Host may give for this server. A page whose own name resolves to this
 * machine (DNS rebinding: evil.example first at the attacker's address, then at 127.0.0.1) is
 * same-origin with the server as far as the browser knows, so CORS does not stop it from reading
 * every record; only its Host header, which still says evil.example, gives it away.
 */
import { isIP } from 'node:net';
import { isLoopback } from '../runtime/services-node';

/** The name in a Host header, without port or IPv6 brackets, lower case, without a final dot. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']') === -1 ? h.length : h.indexOf(']')) : h.replace(/:\d*$/, '');
  return name.replace(/\.$/, '');
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

/**
 * Whether a request's Host header names this server: the address it is bound to; `localhost`
 * and the loopback addresses when that is a loopback address or name; any IP address when it
 * listens on all of them (an address is never a rebinding name); and each of `allowHosts`. A request without Host (HTTP/1.0; no
 * browser sends one) passes.
 */
export function hostAllowed(header: string | undefined, bound: string, allowHosts: readonly string[]): boolean {
  if (header === undefined) return true;
  const name = hostName(header);
  const self = hostName(bound.includes(':') ? `[${bound}]` : bound);
  if (name === self || allowHosts.includes(name)) return true;
  if (WILDCARDS.has(self)) return isIP(name) !== 0 || name === 'localhost';
  // On loopback, any of its names: an agent may say 127.0.0.1 to a server bound as localhost.
  return loopback(self) && (name === 'localhost' || (isIP(name) !== 0 && loopback(name)));
}

const loopback = (name: string) => isLoopback(name.includes(':') ? `[${name}]` : name);
