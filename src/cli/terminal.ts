/**
 * Text from files (labels, model ids, model output, messages quoting a config) reaches a
 * terminal, which obeys escape sequences: an ESC can clear the screen, a carriage return or
 * a bidi override can forge what a line appears to say. Such characters are shown as \uXXXX
 * escapes instead, which also keeps JSON output valid JSON.
 */

/** C0 controls, DEL, C1 controls, and the characters that change line breaks or text direction. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, but newlines and tabs lay text out as the command meant. */
const CONTROLS_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** One field of untrusted text, safe to print inside a line: nothing in it can start a new one. */
export function terminalField(text: string): string {
  return text.replace(CONTROLS, escape);
}

/** A whole line (or lines) of output: newlines and tabs stay, every other control is escaped. */
export function terminalText(text: string): string {
  return text.replace(CONTROLS_BUT_LAYOUT, escape);
}
