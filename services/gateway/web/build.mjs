// Bundle the page: src/main.jsx → app.js, src/app.css → app.css, plus
// index.html and icon.svg, each with a gzipped twin (the gateway serves those
// when the browser accepts gzip). Run by CMake (services/gateway/CMakeLists.txt):
//   node build.mjs --src DIR --modules NODE_MODULES --out DIR
// --modules is where `npm ci` put the packages (the build dir, so the source
// tree stays clean); esbuild resolves imports there (nodePaths).
import { createRequire } from 'node:module';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const here = new URL('.', import.meta.url).pathname;
const src = resolve(args.src || join(here, 'src'));
const modules = resolve(args.modules || join(here, 'node_modules'));
const out = resolve(args.out || join(here, 'dist'));
const esbuild = createRequire(join(modules, 'noop.js'))('esbuild');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const common = {
  bundle: true, minify: true, write: true, logLevel: 'warning', nodePaths: [modules],
  target: ['chrome109', 'firefox115', 'safari16'], legalComments: 'none', absWorkingDir: src,
};
await esbuild.build({
  ...common, entryPoints: [join(src, 'main.jsx')], outfile: join(out, 'app.js'), format: 'esm',
  jsx: 'automatic', jsxImportSource: 'preact', define: { 'process.env.NODE_ENV': '"production"' },
});
await esbuild.build({ ...common, entryPoints: [join(src, 'app.css')], outfile: join(out, 'app.css') });
for (const f of ['index.html', 'icon.svg']) copyFileSync(join(src, f), join(out, f));

const sizes = {};
for (const f of readdirSync(out)) {
  const data = readFileSync(join(out, f));
  const gz = gzipSync(data, { level: 9 });
  writeFileSync(join(out, f + '.gz'), gz);
  sizes[f] = { bytes: data.length, gzip: gz.length };
}
const total = Object.values(sizes).reduce((t, s) => ({ bytes: t.bytes + s.bytes, gzip: t.gzip + s.gzip }), { bytes: 0, gzip: 0 });
writeFileSync(join(out, 'sizes.json'), JSON.stringify({ files: sizes, total }, null, 1) + '\n');
console.log(`web page: ${total.bytes} bytes, ${total.gzip} gzipped (${Object.keys(sizes).join(', ')})`);
