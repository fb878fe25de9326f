import { handlerCpuPerRequest } from './http.ts';
const r = await handlerCpuPerRequest(Number(process.argv[2] ?? 5000), Number(process.argv[3] ?? 1));
console.log(JSON.stringify(r));
