// A pass-through HTTP proxy that adds "Authorization: Bearer TOKEN" to every
// request: the conformance suite has no option for a token, and blendmq's
// /mcp needs one (issue 12). Headers (Host, Origin included) and bodies pass
// as they are, answers stream back as they come (SSE).
//   node auth_proxy.mjs TARGET_BASE_URL TOKEN_FILE   → prints the proxy's base URL, then serves
import http from "node:http";
import fs from "node:fs";

const [target, tokenFile] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile, "utf8").trim();
const to = new URL(target);
const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on("error", () => { res.writeHead(502); res.end(); });
  req.pipe(up);
  res.on("close", () => up.destroy());
});
server.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}`));
