/**
 * One place for how tests launch Chromium, shared by Vitest browser mode and Playwright.
 * CHROMIUM_PATH lets a developer point at another Chrome; CI uses Debian's /usr/bin/chromium.
 */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// WebGPU is off by default in headless Linux Chromium; the rest keeps a closed network quiet
// (Chromium otherwise retries Google hosts on every start). --no-sandbox is needed as root.
export const chromiumArgs = [
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--no-sandbox',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];
