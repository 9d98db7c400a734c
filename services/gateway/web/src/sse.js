// Server-Sent Events read from a fetch() response, parsed by the WHATWG rules
// (fields, comments, CR/LF/CRLF line ends, ids that survive events without
// one). fetch rather than EventSource: it can say why a connection failed
// (401 after a gateway restart ended the session, 503, 400), and we choose
// when and how to reconnect.

// feed(text) for a stream: onEvent(type, data) for each event with data,
// onId(id) for each id (also on events without data: the gateway's position
// markers), onRetry(ms).
export function sseParser({ onEvent, onId, onRetry }) {
  let buf = '', data = [], type = '', id = null;
  function line(l) {
    if (l === '') {
      if (id !== null && onId) onId(id);
      if (data.length) onEvent(type || 'message', data.join('\n'));
      data = []; type = ''; id = null;
      return;
    }
    if (l[0] === ':') return;
    const c = l.indexOf(':');
    const field = c < 0 ? l : l.slice(0, c);
    let value = c < 0 ? '' : l.slice(c + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') type = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value) && onRetry) onRetry(Number(value));
  }
  return chunk => {
    buf += chunk;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buf);
      if (!m || (m[0] === '\r' && m.index === buf.length - 1)) break;   // a lone CR at the end: an LF may follow
      line(buf.slice(0, m.index));
      buf = buf.slice(m.index + m[0].length);
    }
  };
}

// Read a response body into feed until it ends (resolves) or breaks (rejects).
export async function pump(resp, feed) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    feed(decoder.decode(value, { stream: true }));
  }
}
