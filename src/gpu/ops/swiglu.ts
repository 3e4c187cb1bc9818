import { like, type Arr } from './types';

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** silu(gate) * up, the gated MLP activation of Llama and Qwen. */
export function siluMulForward(gate: Arr, up: Arr): Arr {
  const out = like(gate, gate.length);
  for (let i = 0; i < gate.length; i++) out[i] = gate[i] * sigmoid(gate[i]) * up[i];
  return out;
}

export function siluMulBackward(gate: Arr, up: Arr, dh: Arr): { dGate: Arr; dUp: Arr } {
  const dGate = like(gate, gate.length);
  const dUp = like(gate, gate.length);
  for (let i = 0; i < gate.length; i++) {
    const s = sigmoid(gate[i]);
    const silu = gate[i] * s;
    dUp[i] = dh[i] * silu;
    dGate[i] = dh[i] * up[i] * s * (1 + gate[i] * (1 - s));
  }
  return { dGate, dUp };
}
