/**
 * Counted places for requests, shared fairly among client addresses: at most `total` in all and
 * at most `perAddress` for any one address, so that one client (or one attacker) cannot take
 * every place and leave the rest with 429s.
 */
export class AddressSlots {
  private readonly held = new Map<string, number>();
  private count = 0;

  constructor(
    readonly total: number,
    readonly perAddress: number,
  ) {}

  /** How many places are taken, in all or by `address`. */
  taken(address?: string): number {
    return address === undefined ? this.count : (this.held.get(address) ?? 0);
  }

  /**
   * A place for `address`, or why there is none: 'full' (every place is taken) or 'address' (this
   * address holds its share). The returned function gives the place back; calling it again does nothing.
   */
  take(address: string): (() => void) | 'full' | 'address' {
    if (this.count >= this.total) return 'full';
    const mine = this.taken(address);
    if (mine >= this.perAddress) return 'address';
    this.held.set(address, mine + 1);
    this.count++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.count--;
      const left = this.taken(address) - 1;
      if (left > 0) this.held.set(address, left);
      else this.held.delete(address);
    };
  }
}

/**
 * The most in-flight requests one address may hold of `maxInFlight`: a quarter of them stay for
 * other addresses (at least one, where there are two or more).
 */
export function perAddressShare(maxInFlight: number): number {
  return maxInFlight < 2 ? maxInFlight : maxInFlight - Math.max(1, Math.floor(maxInFlight / 4));
}
