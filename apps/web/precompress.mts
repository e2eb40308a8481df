import { readFile, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'vite';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Text compresses; PNG and WOFF2 already are, and a second pass only costs the server a lookup. */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);

/**
 * Writes `<file>.br` and `<file>.gz` beside every text file of the bundle, at the strongest settings (brotli 11,
 * gzip 9): a build pays seconds once so that no request ever spends CPU compressing. A copy that would not be smaller
 * than the file is not written; the gateway then serves the file as it is.
 */
export function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'ds-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir;
    },
    transformIndexHtml: {
      order: 'post',
      // Vite puts the entry script before the stylesheet; the shell paints once the stylesheet is in, so it is asked for first.
      handler(html) {
        const stylesheets = html.match(/[ \t]*<link rel="stylesheet"[^>]*>\n?/g) ?? [];
        const script = html.search(/[ \t]*<script type="module"/);
        if (stylesheets.length === 0 || script < 0) return html;
        let rest = html;
        for (const link of stylesheets) rest = rest.replace(link, '');
        const at = rest.search(/[ \t]*<script type="module"/);
        return `${rest.slice(0, at)}${stylesheets.map((link) => (link.endsWith('\n') ? link : `${link}\n`)).join('')}${rest.slice(at)}`;
      },
    },
    async writeBundle(_options, bundle) {
      // The manifest (.vite/) is read by the size report, never served.
      const files = Object.keys(bundle).filter((name) => COMPRESSIBLE.has(extname(name)) && !name.startsWith('.vite/'));
      await Promise.all(
        files.map(async (name) => {
          const path = join(outDir, name);
          const raw = await readFile(path);
          const [br, gz] = await Promise.all([
            brotli(raw, {
              params: {
                [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
                [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
                [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
              },
            }),
            gzipAsync(raw, { level: constants.Z_BEST_COMPRESSION }),
          ]);
          if (br.length < raw.length) await writeFile(`${path}.br`, br);
          if (gz.length < raw.length) await writeFile(`${path}.gz`, gz);
        }),
      );
    },
  };
}
