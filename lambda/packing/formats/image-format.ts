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
  // Datasets repeat one extension: a key that ends like the last one has its format (the cut,
  // lower-casing and lookup cost more than the rest of a small file's Example).
  if (last && key.endsWith(last.suffix) && key.length > last.suffix.length && key[key.length - last.suffix.length - 1] !== '/') {
    return last.format;
  }
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  // A leading dot marks a hidden file, not an extension.
  if (dot <= 0) return '';
  const extension = name.slice(dot + 1);
  const lower = extension.toLowerCase();
  const format = Object.prototype.hasOwnProperty.call(ALIASES, lower) ? ALIASES[lower] : lower;
  last = { suffix: `.${extension}`, format };
  return format;
}

/** The last extension seen, with its dot, and its format. */
let last: { readonly suffix: string; readonly format: string } | undefined;
