/**
 * CRC-32 (IEEE 802.3, the polynomial zlib uses), table-driven: node:zlib's `crc32` exists only from
 * Node 20.15 and not in a browser. The book checksum (docs/API.md 12.5) of the server's market data,
 * the client library and the web page.
 */

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE, reflected 0xEDB88320, as zlib's `crc32`) of bytes, or of a string as UTF-8. */
export function crc32(data: string | Uint8Array): number {
  let crc = 0xffffffff;
  if (typeof data === "string" && !/[^\p{ASCII}]/u.test(data)) {
    // The checksum text is ASCII (digits, `.`, `:`, `,`, `|`): its char codes are its UTF-8 bytes.
    for (let i = 0; i < data.length; i++) crc = CRC_TABLE[(crc ^ data.charCodeAt(i)) & 0xff] ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  }
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
