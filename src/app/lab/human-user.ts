/**
 * Talk yourself: the person at the keyboard as the run loop's user. The loop asks the user for
 * its next message with generate(); here that call waits until the person submits a reply. So
 * the same RunLoop (one session at a time) serves, judges and trains on a real conversation.
 */
import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, GeneratorKind, TextGenerator } from '../../generators/generator';
import { EndSessionRequest } from '../../runtime/runloop';

/** What the page shows while the loop waits for the person. */
export interface HumanTurn {
  /** The conversation so far as the policy sees it (empty before the first message). */
  messages: ChatMessage[];
}

export class HumanUser implements TextGenerator {
  readonly label = 'you (talk yourself)';
  // GeneratorKind has no "person" kind; the run loop never reads it, and the page labels this
  // user by `label`. 'rules' would mislabel it, so the cast is confined to this line.
  readonly kind = 'human' as unknown as GeneratorKind;

  private pending: { resolve: (text: string) => void; reject: (e: unknown) => void; cleanup: () => void } | null = null;
  /** "New conversation" pressed while the policy was still answering: applies to the next ask. */
  private endRequested = false;

  constructor(private readonly onWaiting: (turn: HumanTurn | null) => void = () => {}) {}

  /** True while the loop is waiting for the person's reply. */
  get waiting(): boolean {
    return this.pending !== null;
  }

  generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    if (this.pending)
      return Promise.reject(new Error('HumanUser: the loop asked for a reply while another was pending; talk yourself runs one session at a time'));
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
    if (this.endRequested) {
      this.endRequested = false;
      // A session that has not started yet has nothing to end: wait for its first message.
      if (messages.length > 0) return Promise.reject(new EndSessionRequest());
    }
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => this.settle((p) => p.reject(signal?.reason ?? new DOMException('aborted', 'AbortError')));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending = { resolve, reject, cleanup: () => signal?.removeEventListener('abort', onAbort) };
      this.onWaiting({ messages: messages.map((m) => ({ role: m.role, content: m.content })) });
    });
  }

  /**
   * The person's reply. Returns false (and keeps waiting) when nothing is asked or the text is
   * blank, so a double submit cannot send a second, empty turn.
   */
  submit(text: string): boolean {
    const reply = text.trim();
    if (!this.pending || !reply) return false;
    this.settle((p) => p.resolve(reply));
    return true;
  }

  /** Ends the conversation: the loop closes the session and asks for a new first message. */
  endConversation(): void {
    if (this.pending) this.settle((p) => p.reject(new EndSessionRequest()));
    else this.endRequested = true;
  }

  private settle(fn: (p: NonNullable<HumanUser['pending']>) => void): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    p.cleanup();
    this.onWaiting(null);
    fn(p);
  }
}
