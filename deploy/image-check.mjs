#!/usr/bin/env node
// Builds docker/Dockerfile and runs every service from the image as the chart runs it:
//
//   npm run image:check          (after npm run build: the engine simulator comes from dist/)
//
// 1. the engine: docker where `docker info` answers, else podman (with runc and cgroupfs: crun refuses the cgroup
//    mount of these machines); neither → podman, runc and debootstrap installed with apt-get where this runs as
//    root, else one line saying how to get them;
// 2. the base: the official node:22-bookworm-slim when it can be pulled within IMAGE_CHECK_PULL_TIMEOUT_S (20 s),
//    else one made here (deploy/lib/node-base-image.sh, cached by a key of what goes into it);
// 3. the build, and the image's size;
// 4. on a fresh database, a private nats-server, the machine's Redis and the engine simulator: `migrate` from the
//    image for each service, then the six services, each as uid 1000 with a read-only root, every capability
//    dropped and no new privileges, on the host's network; each one's time to ready;
// 5. a decision run through the gateway, its webhook delivered, the web application (GET / and one asset);
// 6. SIGTERM to the gateway and the decision-runner during a burst of slow runs: every run already sent is answered
//    200 and both stop with status 0;
// 7. the containers, the database and the nats-server are removed whatever happened.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  call,
  CheckFailed,
  dropDatabase,
  expect,
  freePort,
  freshDatabase,
  REDIS_URL,
  ROOT,
  seconds,
  seedWorkspace,
  SERVICES,
  sleep,
  startNats,
  startReceiver,
  startSimulator,
  stepper,
  waitFor,
} from './lib/check-support.mjs';

const IMAGE = process.env.IMAGE_CHECK_TAG ?? 'localhost/decision-service:check';
const OFFICIAL_BASE = 'docker.io/library/node:22-bookworm-slim';
const PULL_TIMEOUT_S = Number(process.env.IMAGE_CHECK_PULL_TIMEOUT_S ?? 20);
/** podman asks for limits explicitly on these machines; never more than this shell's hard limits, which runc may not raise. */
const hardLimit = (flag, cap) => {
  const value = Number(spawnSync('sh', ['-c', `ulimit -H${flag}`], { encoding: 'utf8' }).stdout.trim());
  return Number.isFinite(value) && value > 0 ? Math.min(value, cap) : cap;
};
const ULIMITS = ['--ulimit', `nofile=${hardLimit('n', 65536)}:${hardLimit('n', 65536)}`, '--ulimit', `nproc=${hardLimit('u', 8192)}:${hardLimit('u', 8192)}`];
const BURST = 40;
const ENGINE_DELAY_MS = 2_000;
const step = stepper('image-check');
const started = Date.now();

/** docker when its engine answers, else podman; null when neither works. */
function detectEngine() {
  if (spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 15_000 }).status === 0) return { name: 'docker', global: [] };
  if (spawnSync('podman', ['info'], { stdio: 'ignore', timeout: 30_000 }).status === 0) {
    return { name: 'podman', global: ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs'] };
  }
  return null;
}

/** Where neither engine works, podman with runc and debootstrap, through apt-get as root (as .ci/run does); else null. */
function installPodman() {
  const canInstall = process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (!canInstall) return null;
  console.log('image-check: no container engine answers; installing podman, runc and debootstrap with apt-get');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'podman', 'runc', 'debootstrap'],
  ]) {
    if (spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env }).status !== 0) return null;
  }
  return detectEngine();
}

const engine = detectEngine() ?? installPodman();
if (!engine) {
  console.error(
    'image-check: no container engine answers (`docker info` and `podman info` both fail); install podman (Debian, as root: apt-get install -y podman runc debootstrap) or start a Docker engine',
  );
  process.exit(1);
}
const run = (args, options = {}) => execFileSync(engine.name, [...engine.global, ...args], { cwd: ROOT, encoding: 'utf8', ...options }).trim();
const runQuiet = (args) => spawnSync(engine.name, [...engine.global, ...args], { stdio: 'ignore' }).status === 0;

/** Runs the engine with its output going to a log, failing with the log's tail. */
function runLogged(args, what) {
  return new Promise((resolve, reject) => {
    const child = spawn(engine.name, [...engine.global, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (chunk) => (log = (log + chunk).slice(-8000)));
    child.stderr.on('data', (chunk) => (log = (log + chunk).slice(-8000)));
    child.once('exit', (code) => (code === 0 ? resolve(log) : reject(new CheckFailed(`${what} failed (${code}):\n${log.split('\n').slice(-30).join('\n')}`))));
  });
}

function pullOfficial() {
  return spawnSync(engine.name, [...engine.global, 'pull', '-q', OFFICIAL_BASE], { stdio: 'ignore', timeout: PULL_TIMEOUT_S * 1000 }).status === 0;
}

const containers = [];
const cleanups = [];
const prefix = `ds-image-check-${randomBytes(3).toString('hex')}`;

function containerArgs(name, env) {
  const readOnly = engine.name === 'podman' ? ['--read-only', '--read-only-tmpfs=false'] : ['--read-only'];
  return [
    '--name',
    name,
    '--network',
    'host',
    '--user',
    '1000:1000',
    ...readOnly,
    '--tmpfs',
    '/tmp:rw,size=64m,mode=1777',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    ...ULIMITS,
    ...Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]),
  ];
}

async function main() {
  console.log(`image-check: engine ${engine.name} (${run(['--version'])})`);
  await step('base image', async () => {
    if (pullOfficial()) return OFFICIAL_BASE;
    const made = execFileSync('bash', [join(ROOT, 'deploy', 'lib', 'node-base-image.sh'), engine.name], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    baseImage = made.trim().split('\n').pop();
    return `${OFFICIAL_BASE} not pulled within ${PULL_TIMEOUT_S} s; made ${baseImage}`;
  });

  let size = 0;
  await step(`build ${IMAGE}`, async () => {
    const ignore = engine.name === 'podman' ? ['--ignorefile', 'docker/Dockerfile.dockerignore'] : [];
    await runLogged(
      [
        'build',
        '--network',
        'host',
        ...ignore,
        '-f',
        'docker/Dockerfile',
        '--build-arg',
        `BUILD_IMAGE=${baseImage}`,
        '--build-arg',
        `RUNTIME_IMAGE=${baseImage}`,
        '-t',
        IMAGE,
        '.',
      ],
      'the build',
    );
    size = Number(run(['image', 'inspect', '--format', '{{.Size}}', IMAGE]));
    return `${(size / 1e6).toFixed(0)} MB`;
  });

  const [databaseUrl, nats, simulator, receiver] = await Promise.all([freshDatabase('ds_image_check'), startNats(), startSimulator(), startReceiver()]);
  cleanups.push(
    () => dropDatabase(databaseUrl),
    () => nats.stop(),
    () => simulator.close(),
    () => receiver.close(),
  );
  const adminToken = `image-check-${randomBytes(12).toString('hex')}`;
  const port = await freePort();
  const opsPorts = Object.fromEntries(await Promise.all(SERVICES.map(async (name) => [name, await freePort()])));
  const key = () => `check:${randomBytes(32).toString('base64')}`;
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.url,
    REDIS_URL,
    RATE_LIMIT_STORE: 'redis',
    RATE_LIMIT_KEY_PREFIX: prefix,
    ADMIN_TOKEN: adminToken,
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: 'warn',
    PASSWORD_SCRYPT_N: '16384',
    ENGINE_DEFAULT: 'llm',
    ENGINE_LLM_PROVIDER: 'openai',
    ENGINE_LLM_BASE_URL: `${simulator.url}/v1`,
    ENGINE_LLM_API_KEY: 'sim-key',
    ENGINE_LLM_MODEL: 'sim-standard',
    ENGINE_CREDENTIALS_KEY: key(),
    DELIVERY_SECRETS_KEY: key(),
    RUNNER_SECRETS_KEY: key(),
    DELIVERY_ALLOW_PRIVATE_TARGETS: 'true',
    OPS_HOST: '127.0.0.1',
  };
  cleanups.push(async () => {
    for (const name of containers) runQuiet(engine.name === 'podman' ? ['rm', '-f', '-t', '0', name] : ['rm', '-f', name]);
  });

  await step('migrate from the image, each service', async () => {
    const times = [];
    for (const service of SERVICES) {
      const name = `${prefix}-migrate-${service}`;
      const t = Date.now();
      await runLogged(['run', '--rm', ...containerArgs(name, env), IMAGE, 'node', `/app/dist/apps/${service}/src/main.js`, 'migrate'], `migrate ${service}`);
      times.push(`${service} ${seconds(Date.now() - t)}`);
    }
    return times.join(', ');
  });

  const ready = {};
  await step('six services from the image (uid 1000, read-only root, no capabilities, no new privileges)', async () => {
    // One after another, so that each one's time to ready is its own and not its share of a crowded start.
    for (const service of SERVICES) {
      const name = `${prefix}-${service}`;
      containers.push(name);
      const t = Date.now();
      run([
        'run',
        '-d',
        ...containerArgs(name, { ...env, PORT: String(port), OPS_PORT: String(opsPorts[service]) }),
        IMAGE,
        'node',
        `/app/dist/apps/${service}/src/main.js`,
      ]);
      await waitFor(
        async () => {
          if (run(['inspect', '--format', '{{.State.Running}}', name]) !== 'true') throw new CheckFailed(`${service} exited:\n${logsOf(name)}`);
          return (await fetch(`http://127.0.0.1:${opsPorts[service]}/readyz`)).ok;
        },
        120_000,
        `${service} ready`,
        200,
      ).catch((error) => {
        throw new CheckFailed(`${error.message}\n${logsOf(name)}`);
      });
      ready[service] = Date.now() - t;
    }
    const user = run(['exec', `${prefix}-gateway`, 'id', '-u']);
    expect(user === '1000', `the gateway runs as uid ${user}, not 1000`);
    const write = spawnSync(engine.name, [...engine.global, 'exec', `${prefix}-gateway`, 'touch', '/app/x'], { stdio: 'ignore' });
    expect(write.status !== 0, 'the root file system is writable');
    return SERVICES.map((service) => `${service} ${seconds(ready[service])}`).join(', ');
  });

  const base = `http://127.0.0.1:${port}`;
  await step('a decision run through the gateway, its webhook delivered', async () => {
    const seeded = await seedWorkspace({ base, adminToken, databaseUrl, webhookUrl: receiver.url });
    const reply = await call(base, 'POST', `/v1/decisions/${seeded.slug}`, { token: seeded.apiKey, body: { state: { message: 'My order arrived broken' } } });
    expect(reply.status === 200 && typeof reply.body?.action === 'string', `the run answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    const deliveryId = reply.body.destinations?.[0]?.delivery_id;
    expect(deliveryId, `the run queued no delivery: ${reply.text.slice(0, 300)}`);
    await waitFor(async () => receiver.byId.get(deliveryId) === 1, 30_000, 'the webhook delivery');
    seededWorkspace = seeded;
    return `action ${reply.body.action}, delivery ${deliveryId}`;
  });

  await step('the web application (GET / and one asset)', async () => {
    const page = await fetch(`${base}/`);
    const html = await page.text();
    expect(
      page.status === 200 && /text\/html/.test(page.headers.get('content-type') ?? ''),
      `GET / answered ${page.status} ${page.headers.get('content-type')}`,
    );
    const asset = /(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/.exec(html)?.[1];
    expect(asset, 'the page names no asset under /assets/');
    const reply = await fetch(`${base}${asset}`);
    expect(reply.status === 200 && (await reply.arrayBuffer()).byteLength > 0, `${asset} answered ${reply.status}`);
    return `${asset}`;
  });

  await step(`SIGTERM to the gateway and the decision-runner during a burst of ${BURST} runs`, async () => {
    const marker = seededWorkspace.marker;
    const scripted = await call(simulator.url, 'POST', '/_sim/scripts', { body: { match: marker, steps: [{ delayMs: ENGINE_DELAY_MS }], repeat: true } });
    expect(scripted.status === 201, `scripting the simulator answered ${scripted.status}`);
    const runs = Array.from({ length: BURST }, (_, i) =>
      call(base, 'POST', `/v1/decisions/${seededWorkspace.slug}`, { token: seededWorkspace.apiKey, body: { state: { message: `burst ${i}` } } }),
    );
    // Every run is with the engine (held for ENGINE_DELAY_MS) when the signals arrive.
    await waitFor(
      async () => (await call(simulator.url, 'GET', `/_sim/requests?match=${encodeURIComponent(marker)}`)).body?.data?.length >= BURST,
      20_000,
      'the burst reaching the engine',
    );
    const signalled = Date.now();
    run(['kill', '--signal', 'TERM', `${prefix}-gateway`]);
    run(['kill', '--signal', 'TERM', `${prefix}-decision-runner`]);
    const replies = await Promise.all(runs);
    const statuses = replies.map((reply) => reply.status);
    const bad = statuses.filter((status) => status !== 200);
    expect(bad.length === 0, `${bad.length} of ${BURST} runs in flight were not answered 200: ${[...new Set(statuses)].join(', ')}`);
    const exits = {};
    for (const service of ['gateway', 'decision-runner']) {
      const name = `${prefix}-${service}`;
      await waitFor(async () => run(['inspect', '--format', '{{.State.Running}}', name]) === 'false', 90_000, `${service} to stop`, 200);
      exits[service] = run(['inspect', '--format', '{{.State.ExitCode}}', name]);
      expect(exits[service] === '0', `${service} exited with ${exits[service]}:\n${logsOf(name)}`);
    }
    return `${BURST}/${BURST} answered 200, stopped with 0 within ${seconds(Date.now() - signalled)}`;
  });

  const summary = [
    `image ${(size / 1e6).toFixed(0)} MB (base ${baseImage === OFFICIAL_BASE ? 'official' : 'made here'})`,
    `time to ready ${SERVICES.map((service) => `${service} ${seconds(ready[service])}`).join(', ')}`,
    `wall time ${seconds(Date.now() - started)}`,
  ];
  console.log(`image-check: OK — ${summary.join('; ')}`);
}

let seededWorkspace = null;
let baseImage = OFFICIAL_BASE;

function logsOf(name) {
  const out = spawnSync(engine.name, [...engine.global, 'logs', '--tail', '30', name], { encoding: 'utf8' });
  return `${out.stdout ?? ''}${out.stderr ?? ''}`.trim();
}

async function cleanUp() {
  for (const cleanup of cleanups.reverse())
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
}

let code = 0;
const stop = async () => {
  await cleanUp();
  process.exit(130);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
try {
  await main();
} catch (error) {
  console.error(`image-check: ${error instanceof CheckFailed ? error.message : (error?.stack ?? String(error))}`);
  code = 1;
} finally {
  await cleanUp();
}
await sleep(0);
process.exit(code);
