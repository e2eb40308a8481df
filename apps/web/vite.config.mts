import { defineConfig } from 'vite';
import { resolve } from 'node:path';
import { precompress } from './precompress.mts';

const root = import.meta.dirname;

// React's automatic JSX runtime through Vite's own transformer (Oxc): no React plugin, no Babel.
export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic' } },
  plugins: [precompress()],
  resolve: {
    alias: { '@ds/decision-schema': resolve(root, '../../libs/decision-schema/src/index.ts') },
  },
  build: {
    outDir: resolve(root, '../../dist/apps/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    // Everything is served from 'self': no inline module preload polyfill, no data: scripts.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
    // Which file each screen is in, for `npm run web:size`; under .vite/, which the gateway never serves.
    manifest: true,
    // Brotli at its strongest takes seconds on the script, once per build by design; rolldown would report it each time.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  logLevel: 'warn',
});
