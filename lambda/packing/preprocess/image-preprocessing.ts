/**
 * What the packer does to each image before it becomes a record (issue 26): resized once at pack
 * time so that every epoch decodes fewer pixels. Absent, the records carry the files' bytes
 * unchanged. One definition, shared by the CLI, the Lambda packer (through its environment, see
 * lib/contract/handler-environment.ts) and the manifest.
 */
export interface ImagePreprocessing {
  /** Resize so that the shorter side is this many pixels, keeping the aspect ratio; never upscales. */
  readonly shorterSide?: number;
  /** Then cap the longer side at this many pixels, keeping the aspect ratio; never upscales. */
  readonly longerSide?: number;
  /** JPEG quality of the re-encoded image, 1–100 (default 90). */
  readonly jpegQuality?: number;
  /** Keep single-channel (grayscale) inputs as one channel instead of converting them to RGB (default false). */
  readonly keepGrayscale?: boolean;
}

/** The manifest's record of what was done: the settings with their defaults filled in, and the library versions that did it. */
export interface ManifestPreprocessing {
  readonly shorterSide: number | null;
  readonly longerSide: number | null;
  readonly jpegQuality: number;
  readonly keepGrayscale: boolean;
  /** npm `sharp` version. */
  readonly sharp: string;
  /** libvips version sharp was built with. */
  readonly libvips: string;
}
