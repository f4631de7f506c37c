/**
 * The fix both data-starved verdicts name (issue 26): the images resized once when the dataset is
 * packed, by the construct's prop or the command line's flag, so every epoch decodes fewer pixels
 * and reads fewer bytes.
 */
export const RESIZE_AT_PACK_TIME = 'Resize at pack time (imagePreprocessing / training-io pack --resize)';
