/**
 * WebGPU kernels against the CPU reference, op by op, in headless Chromium (SwiftShader there:
 * correct but slow, so shapes are tiny). The cases live in test/support/gpu/cases.ts.
 */
import { createWebGPUBackend } from '../webgpu/backend';
import { defineWebGPUSuite } from '../../../test/support/gpu/suite';

defineWebGPUSuite('WebGPU (browser)', () => createWebGPUBackend());
