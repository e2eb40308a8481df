import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { ServiceError } from '@ds/contracts';
import { Logger, PLATFORM } from '@ds/platform';
import { servedAddressWarning } from '../app-address';
import { GatewayConfig } from '../config';
import { PublicRoute } from '../http/access';
import { chooseContentCoding, ContentCoding, etagMatches, PREBUILT_CODINGS, PrebuiltCoding } from '../http/content-coding';

/** Where `npm run build` puts the web application (vite's outDir), beside the compiled services in dist/. */
export const WEB_DIST_DIR = resolve(__dirname, '../../../web');

/**
 * No inline script or style, no third-party origin; the application only talks to its own /app/v1.
 * frame-ancestors is left to the embed launch, which knows the partner's origins.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

/** The SPA's routes; each serves index.html and the client-side router draws the screen. */
export const APP_ROUTES = [
  '',
  'sign-in',
  'sign-up',
  'workspaces',
  'decisions',
  'decisions/:id',
  'decisions/:id/:view',
  'executions',
  'executions/:id',
  'reviews',
  'keys',
  'members',
  'billing',
  'settings',
  'deliveries',
  'deliveries/:id',
  'signing-secret',
  'secrets',
  'invitations/accept',
  'account',
];

/** One file of the bundle and the copies the build compressed in advance, each with its own entity tag. */
interface StaticFile {
  contentType: string;
  /** The codings a copy was built for, in the order of preference the negotiation breaks ties with. */
  codings: PrebuiltCoding[];
  bodies: Partial<Record<ContentCoding, Buffer>> & { identity: Buffer };
  etags: Record<ContentCoding, string>;
}

interface WebBundle {
  index: StaticFile;
  /** Hashed file names under assets/, read once: a name not in this map is never looked up on disk. */
  assets: Map<string, StaticFile>;
}

const SUFFIXES: Record<PrebuiltCoding, string> = { br: '.br', gzip: '.gz' };

/** Reads a file and the `.br` and `.gz` copies `npm run build` wrote beside it, when it wrote them. */
function readStaticFile(dir: string, name: string, contentType: string, present: ReadonlySet<string>): StaticFile {
  const identity = readFileSync(join(dir, name));
  // One tag per content and coding: a cache holding the gzip copy must not be told its copy is the brotli one.
  const tag = createHash('sha256').update(identity).digest('base64url').slice(0, 22);
  const file: StaticFile = {
    contentType,
    codings: [],
    bodies: { identity },
    etags: { identity: `"${tag}"`, br: `"${tag}-br"`, gzip: `"${tag}-gzip"` },
  };
  for (const coding of PREBUILT_CODINGS) {
    const copy = `${name}${SUFFIXES[coding]}`;
    if (!present.has(copy)) continue;
    file.bodies[coding] = readFileSync(join(dir, copy));
    file.codings.push(coding);
  }
  return file;
}

function loadBundle(dir: string): WebBundle | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const index = readStaticFile(dir, 'index.html', 'text/html; charset=utf-8', new Set(readdirSync(dir)));
  const assetsDir = join(dir, 'assets');
  const assets = new Map<string, StaticFile>();
  if (existsSync(assetsDir)) {
    const present = new Set(readdirSync(assetsDir));
    for (const name of present) {
      // `x.js.br` has no content type of its own: the copies are reached only through their file's name.
      const contentType = CONTENT_TYPES[extname(name)];
      if (contentType) assets.set(name, readStaticFile(assetsDir, name, contentType, present));
    }
  }
  return { index, assets };
}

/**
 * The copy of `file` the request's Accept-Encoding takes, with the headers that describe it; 304 with no body when
 * If-None-Match names that copy's tag. Content-Length is Fastify's, from the buffer sent.
 */
function sendStaticFile(file: StaticFile, request: FastifyRequest, reply: FastifyReply): Buffer | string {
  const coding = chooseContentCoding(headerText(request.headers['accept-encoding']), file.codings);
  // Every answer varies by Accept-Encoding, an identity one too: a shared cache must not hand it to a client that takes br.
  const vary = reply.getHeader('vary');
  if (typeof vary !== 'string' || vary === '') reply.header('vary', 'Accept-Encoding');
  else if (!/accept-encoding/i.test(vary)) reply.header('vary', `${vary}, Accept-Encoding`);
  reply.header('etag', file.etags[coding]);
  if (etagMatches(headerText(request.headers['if-none-match']), file.etags[coding])) {
    reply.status(304);
    return '';
  }
  reply.header('content-type', file.contentType);
  if (coding !== 'identity') reply.header('content-encoding', coding);
  return file.bodies[coding] ?? file.bodies.identity;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Serves the web application at the gateway's root: hashed assets cached for a year, index.html revalidated on every
 * load; each in the brotli or gzip copy the build made when the client takes one, never compressed per request.
 */
@Controller()
export class WebController {
  private readonly bundle = loadBundle(WEB_DIST_DIR);
  /** Said once per process: one line is enough for the operator, and a stream of them would drown the log. */
  private addressWarned = false;

  constructor(
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  @Get(APP_ROUTES)
  @PublicRoute()
  page(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Buffer | string {
    if (!this.bundle) throw new ServiceError('NOT_FOUND', 'The web application is not built; run npm run build.');
    if (!this.addressWarned) {
      const warning = servedAddressWarning(this.config.appUrl, { protocol: request.protocol, host: request.host });
      if (warning) {
        this.addressWarned = true;
        this.logger.warn(warning);
      }
    }
    // no-cache, not no-store: the browser keeps the page but asks every time, and the ETag makes that a 304 until a
    // new build names new assets, which it then sees at once.
    reply.header('cache-control', 'no-cache');
    // A page loaded in an embed session already carries that session's frame-ancestors (set at the edge); keep it.
    const framing = reply.getHeader('content-security-policy');
    reply.header('content-security-policy', typeof framing === 'string' && framing.startsWith('frame-ancestors ') ? `${APP_CSP}; ${framing}` : APP_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    return sendStaticFile(this.bundle.index, request, reply);
  }

  @Get('assets/:file')
  @PublicRoute()
  asset(@Param('file') name: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Buffer | string {
    const file = this.bundle?.assets.get(name);
    if (!file) throw new ServiceError('NOT_FOUND', 'No such file.');
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    reply.header('x-content-type-options', 'nosniff');
    return sendStaticFile(file, request, reply);
  }
}
