/**
 * The `image/format` value of a file, from its key's extension: lower case, with the common
 * aliases folded (`jpg` → `jpeg`, as TensorFlow's object-detection tools write it). The extension is
 * what the source tells us; sniffing content is the training pipeline's job (decoders sniff anyway).
 */
const ALIASES: Readonly<Record<string, string>> = {
  jpg: 'jpeg',
  jpe: 'jpeg',
  tif: 'tiff',
};

/** `cat/0001.JPG` → `jpeg`, `x.png` → `png`, `README` → `` (no extension). */
export function imageFormatOf(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  // A leading dot marks a hidden file, not an extension.
  if (dot <= 0) return '';
  const extension = name.slice(dot + 1).toLowerCase();
  return Object.prototype.hasOwnProperty.call(ALIASES, extension) ? ALIASES[extension] : extension;
}
