// The first step of `npm test`: makes sure what the tests talk to is there, so that a first `npm test` on a fresh
// machine never fails for a reason the README does not state.
//
// - PostgreSQL (127.0.0.1:5432), Redis (6379) and NATS with JetStream (4222): started where installed but not
//   answering, as this machine's image starts them.
// - Chromium (the browser journeys) and promtool (the alert rules): installed through apt-get where the machine
//   has it and we may use it (root); otherwise one line names what is missing and how to get it, and the run stops.
//
// PREFLIGHT=off skips it, for machines whose services are started another way (their addresses in DATABASE_URL,
// REDIS_URL and NATS_URL).
const { execFileSync, spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync } = require('node:fs');
const net = require('node:net');
const { setTimeout: sleep } = require('node:timers/promises');

const SERVICES = [
  { name: 'PostgreSQL', port: 5432, start: startPostgres, get: 'apt-get install postgresql' },
  { name: 'Redis', port: 6379, start: startRedis, get: 'apt-get install redis-server' },
  { name: 'NATS', port: 4222, start: startNats, get: 'apt-get install nats-server' },
];
const TOOLS = [
  { command: process.env.CHROMIUM_PATH ?? 'chromium', pkg: 'chromium', why: 'the browser journeys' },
  { command: 'promtool', pkg: 'prometheus', why: 'the alert rules' },
];

function stop(line) {
  process.stderr.write(`preflight: ${line}\n`);
  process.exit(1);
}

function answers(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

async function waitFor(port) {
  for (let i = 0; i < 50; i++) {
    if (await answers(port)) return true;
    await sleep(200);
  }
  return false;
}

const has = (command) => spawnSync('sh', ['-c', `command -v "$0"`, command], { stdio: 'ignore' }).status === 0;
const run = (command, args) => execFileSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });

function startPostgres() {
  if (!has('pg_ctlcluster') || !existsSync('/etc/postgresql')) return false;
  const [version] = readdirSync('/etc/postgresql');
  if (!version) return false;
  run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start']);
  return true;
}

function startRedis() {
  if (!has('redis-server')) return false;
  mkdirSync('/var/lib/redis', { recursive: true });
  mkdirSync('/var/log/redis', { recursive: true });
  run('redis-server', [
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '-::1',
    '--port',
    '6379',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    '/var/lib/redis',
    '--logfile',
    '/var/log/redis/tests.log',
  ]);
  return true;
}

function startNats() {
  const server = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find(existsSync);
  if (!server || !has('start-stop-daemon')) return false;
  mkdirSync('/var/lib/nats-server', { recursive: true });
  run('start-stop-daemon', [
    '--start',
    '--oknodo',
    '--background',
    '--exec',
    server,
    '--',
    '-a',
    '127.0.0.1',
    '-p',
    '4222',
    '-js',
    '-sd',
    '/var/lib/nats-server',
    '-l',
    '/var/log/nats-server.log',
  ]);
  return true;
}

async function main() {
  if (process.env.PREFLIGHT === 'off') return;
  for (const service of SERVICES) {
    if (await answers(service.port)) continue;
    process.stdout.write(`preflight: starting ${service.name}\n`);
    let started = false;
    try {
      started = service.start();
    } catch {
      started = false;
    }
    if (!started) stop(`${service.name} does not answer on 127.0.0.1:${service.port} and is not installed here: ${service.get}, or start it yourself`);
    if (!(await waitFor(service.port))) stop(`${service.name} was started but does not answer on 127.0.0.1:${service.port}; see its log`);
  }

  const missing = TOOLS.filter((tool) => !has(tool.command));
  if (missing.length === 0) return;
  const packages = missing.map((tool) => tool.pkg);
  const what = missing.map((tool) => `${tool.command} (${tool.why})`).join(' and ');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !has('apt-get')) stop(`${what} missing: install ${packages.join(' ')} (Debian: sudo apt-get install -y ${packages.join(' ')})`);
  process.stdout.write(`preflight: installing ${packages.join(' ')} for ${what}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const install = update.status === 0 && spawnSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (!install || install.status !== 0 || missing.some((tool) => !has(tool.command))) {
    stop(`${what} could not be installed with apt-get: install ${packages.join(' ')} and run npm test again`);
  }
}

main().catch((error) => stop(String(error?.message ?? error)));
