/** Image formats told apart by their first bytes (the name sharp and the manifest use). */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'bmp' | 'jp2' | 'heif' | 'svg' | 'ico' | 'psd';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JP2_SIGNATURE = Buffer.from([0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50, 0x20, 0x20, 0x0d, 0x0a, 0x87, 0x0a]);
const J2K_CODESTREAM = Buffer.from([0xff, 0x4f, 0xff, 0x51]);
const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'heim', 'heis', 'mif1', 'msf1', 'avif', 'avis']);

/**
 * The format of `data` from its signature (the bytes, never the file's name: real datasets hold
 * PNGs named .JPEG), or undefined when none is known. SVG is recognised as text starting with
 * `<svg` or an XML prolog followed by `<svg`.
 */
export function sniffImageFormat(data: Buffer): ImageFormat | undefined {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpeg';
  if (startsWith(data, PNG_SIGNATURE)) return 'png';
  if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  const head = data.toString('latin1', 0, Math.min(data.length, 6));
  if (head === 'GIF87a' || head === 'GIF89a') return 'gif';
  if (head.startsWith('II*\0') || head.startsWith('MM\0*')) return 'tiff';
  if (head.startsWith('BM')) return 'bmp';
  if (startsWith(data, JP2_SIGNATURE) || startsWith(data, J2K_CODESTREAM)) return 'jp2';
  if (data.length >= 12 && data.toString('latin1', 4, 8) === 'ftyp' && HEIF_BRANDS.has(data.toString('latin1', 8, 12))) return 'heif';
  if (head.startsWith('\0\0\x01\0')) return 'ico';
  if (head.startsWith('8BPS')) return 'psd';
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(data.toString('latin1', 0, Math.min(data.length, 1024)))) return 'svg';
  return undefined;
}

function startsWith(data: Buffer, signature: Buffer): boolean {
  return data.length >= signature.length && data.compare(signature, 0, signature.length, 0, signature.length) === 0;
}
