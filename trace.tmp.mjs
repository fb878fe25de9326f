import { build } from 'esbuild';
const r = await build({ entryPoints: [process.argv[2]], bundle: true, platform: 'browser', format: 'esm', write: false, metafile: true, logLevel: 'error' });
const ins = r.metafile.inputs;
// print src files with their importers chain
for (const [k, v] of Object.entries(ins)) if (!k.startsWith('node_modules')) console.log(k, '<-', v.imports.filter(i=>!i.external).map(i=>i.path).join(' '));
const pkgs = new Set(Object.keys(ins).filter(k=>k.startsWith('node_modules')).map(k=>k.split('/')[1]));
console.log('PKGS', [...pkgs].join(' '));
