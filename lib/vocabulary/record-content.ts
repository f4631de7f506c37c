/**
 * What the records hold.
 */
export enum RecordContent {
  /**
   * Images: every file is checked at pack time, whole, as a JPEG or PNG the training readers decode
   * (with `imagePreprocessing`, also WebP, TIFF, GIF); any other file is a listed failure with its reason.
   */
  IMAGES = 'images',
  /** Any bytes: files packed as they are. */
  ANY = 'any',
}
