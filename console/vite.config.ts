import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { CONSOLE_LIMITS } from '../scripts/console-limits';

/** `virtual:limits`: the inputs' limits, read from the API's route schemas (console/src/limits.ts). */
function limits(): Plugin {
  const id = '\0virtual:limits';
  return {
    name: 'tollgate-limits',
    resolveId: (source) => (source === 'virtual:limits' ? id : null),
    load: (source) => (source === id ? `export default ${JSON.stringify(CONSOLE_LIMITS)};` : null),
  };
}

/**
 * The store owner's console (docs/admin.md), built into dist/admin and served at /admin by
 * src/pages/admin.ts. `npx vite --config console/vite.config.ts` serves it with hot reload while a
 * store runs on 127.0.0.1:8080 (`npm start`), whose /v1 API it reaches through the proxy.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  // React's JSX without a plugin: esbuild compiles it (no fast refresh; the page reloads instead).
  esbuild: { jsx: 'automatic' },
  plugins: [limits()],
  build: {
    outDir: fileURLToPath(new URL('../dist/admin', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // One file per screen group keeps the first load small (test/browser/admin.test.ts checks it).
    chunkSizeWarningLimit: 400,
    rollupOptions: {
      // React Server Components' "use client" markers mean nothing in a browser-only bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080' } },
});
