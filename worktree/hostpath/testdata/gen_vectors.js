// Generates vectors.json: the results of Node's own path module (posix and
// win32) for a set of inputs, so the Go port can be table-tested against
// Node on any OS. Run: node gen_vectors.js > vectors.json
'use strict';
const path = require('path');

const posixPaths = [
  '', '.', '..', '/', '//', '///', 'a', 'a/', 'a//b', '/a/b/', '/a/./b', '/a/../b', '/../a',
  '../../a', 'a/../..', 'a/..', './a', '..foo/x', '.../a', 'a/.../b', '/a/b/../../..',
  'a\\b', '/a\\b/../c', 'foo/bar/', '//server/share', '/tmp/x/', 'C:\\x', 'C:/x', '~/x',
  '/a//b///c', 'dir.', 'é/ü', '/x/y/z/../../w', 'a/b/c/./../../g', '.a/.b', '/..', '/.',
];

const winPaths = [
  '', '.', '..', '\\', '/', '\\\\', '//', 'a', 'a\\', 'a/b\\c', 'c:', 'C:', 'c:\\', 'C:/', 'c:x',
  'C:x\\..\\..\\y', 'C:\\a\\b', 'c:\\A\\b', 'C:\\a\\..\\..\\b', 'C:/a/b/', 'C:\\a\\b\\',
  'D:\\other', 'd:', 'D:rel', '\\\\server\\share', '\\\\server\\share\\', '\\\\server\\share\\dir\\f',
  '//server/share/dir', '\\\\server', '\\\\server\\', '\\\\?\\C:\\x\\y', '\\\\?\\UNC\\srv\\sh\\f',
  '\\\\.\\PhysicalDrive0', '\\\\.\\pipe\\x', '\\a\\b', '/a/b', 'a\\..\\..\\b', '..\\x', '..foo\\x',
  'dir.\\x', 'f.txt:stream', 'CON', 'con:', 'NUL:x', 'COM1:', 'LPT¹:a', 'CONx', 'a:b', 'a:b:c',
  'x\\y:', 'C:\\x\\..\\..\\..', 'c:/x//y\\\\z', '\\\\server\\share\\..\\..\\x', 'C:..\\x',
  'é\\Ü', 'C:\\Proj\\x', 'c:\\proj\\x', 'x/', './', '.\\', '..\\',
];

const posixCwds = ['/home/dev/root', '/', '/a/b/c'];
const winCwds = ['C:\\dev\\root', 'c:\\', 'D:\\d', '\\\\server\\share\\cwd', '/posix/cwd'];

function withCwd(cwd, fn) {
  const saved = process.cwd;
  process.cwd = () => cwd;
  try { return fn(); } finally { process.cwd = saved; }
}

function cases(flavor, paths, cwds) {
  const p = path[flavor];
  const out = { normalize: [], isAbsolute: [], join: [], resolve: [], relative: [] };
  for (const x of paths) {
    out.normalize.push({ in: [x], out: p.normalize(x) });
    out.isAbsolute.push({ in: [x], out: p.isAbsolute(x) });
  }
  const pairs = [];
  for (let i = 0; i < paths.length; i++) {
    for (const j of [0, 1, 2, 5, 11, 17, 29]) pairs.push([paths[i], paths[(i + j) % paths.length]]);
  }
  for (const [a, b] of pairs) out.join.push({ in: [a, b], out: p.join(a, b) });
  out.join.push({ in: [], out: p.join() });
  out.join.push({ in: ['a', '', 'b', ''], out: p.join('a', '', 'b', '') });
  out.join.push({ in: ['//', 'server', 'share'], out: p.join('//', 'server', 'share') });
  out.join.push({ in: ['\\\\server', 'share'], out: p.join('\\\\server', 'share') });
  for (const cwd of cwds) {
    for (const x of paths) {
      out.resolve.push({ cwd, in: [x], out: withCwd(cwd, () => p.resolve(x)) });
    }
    for (const [a, b] of pairs) {
      out.resolve.push({ cwd, in: [a, b], out: withCwd(cwd, () => p.resolve(a, b)) });
      out.relative.push({ cwd, in: [a, b], out: withCwd(cwd, () => p.relative(a, b)) });
    }
    out.resolve.push({ cwd, in: [], out: withCwd(cwd, () => p.resolve()) });
  }
  return out;
}

const vectors = {
  node: process.version,
  posix: cases('posix', posixPaths, posixCwds),
  win32: cases('win32', winPaths, winCwds),
};
process.stdout.write(JSON.stringify(vectors) + '\n');
