/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum zlib's `crc32` computes, over
 * the UTF-8 bytes of a text. Table driven: node:zlib has `crc32` only from Node 20.15, and the
 * server runs on 20.12 too (package.json engines).
 */

const TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

const encoder = new TextEncoder();

/** CRC-32 of `bytes`, an unsigned 32-bit integer. */
export function crc32Bytes(bytes: Uint8Array): number {
  let c = -1;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** CRC-32 of the UTF-8 encoding of `text`, an unsigned 32-bit integer. */
export function crc32(text: string): number {
  return crc32Bytes(encoder.encode(text));
}
