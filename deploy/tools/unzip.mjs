#!/usr/bin/env node
// Minimal unzip with Node built-ins only (fallback of deploy/lib/tools.sh when neither `unzip`
// nor `python3` exists). Stored and deflated entries; no zip64, no encryption.
//
//   node deploy/tools/unzip.mjs <archive.zip> <destination-dir>
import { closeSync, mkdirSync, openSync, readSync, fstatSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join, normalize, isAbsolute } from 'node:path';
import { inflateRawSync } from 'node:zlib';

const [archive, dest] = process.argv.slice(2);
if (!archive || !dest) {
  console.error('usage: unzip.mjs <archive.zip> <destination-dir>');
  process.exit(2);
}
const fd = openSync(archive, 'r');
const read = (pos, len) => {
  const b = Buffer.alloc(len);
  readSync(fd, b, 0, len, pos);
  return b;
};
const size = fstatSync(fd).size;
// End of central directory: last 22..(22 + 65535) bytes.
const tailLen = Math.min(size, 22 + 0xffff);
const tail = read(size - tailLen, tailLen);
const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
if (eocd < 0) throw new Error(`${archive}: not a zip file`);
const count = tail.readUInt16LE(eocd + 10);
const cdSize = tail.readUInt32LE(eocd + 12);
const cdOffset = tail.readUInt32LE(eocd + 16);
if (cdOffset === 0xffffffff || count === 0xffff) throw new Error('zip64 archives are not supported');
const cd = read(cdOffset, cdSize);
let p = 0;
for (let n = 0; n < count; n++) {
  if (cd.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central directory');
  const method = cd.readUInt16LE(p + 10);
  const compSize = cd.readUInt32LE(p + 20);
  const nameLen = cd.readUInt16LE(p + 28);
  const extraLen = cd.readUInt16LE(p + 30);
  const commentLen = cd.readUInt16LE(p + 32);
  const mode = (cd.readUInt32LE(p + 38) >>> 16) & 0o777;
  const local = cd.readUInt32LE(p + 42);
  const name = cd.toString('utf8', p + 46, p + 46 + nameLen);
  p += 46 + nameLen + extraLen + commentLen;

  const rel = normalize(name);
  if (isAbsolute(rel) || rel.startsWith('..')) throw new Error(`unsafe entry name ${name}`);
  const out = join(dest, rel);
  if (name.endsWith('/')) {
    mkdirSync(out, { recursive: true });
    continue;
  }
  const lh = read(local, 30);
  if (lh.readUInt32LE(0) !== 0x04034b50) throw new Error(`bad local header for ${name}`);
  const data = read(local + 30 + lh.readUInt16LE(26) + lh.readUInt16LE(28), compSize);
  let body;
  if (method === 0) body = data;
  else if (method === 8) body = inflateRawSync(data);
  else throw new Error(`${name}: compression method ${method} not supported`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, body);
  if (mode) chmodSync(out, mode);
}
closeSync(fd);
