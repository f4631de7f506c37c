/**
 * The sharp and libvips versions the Lambda packer ships (package.json pins sharp; each sharp
 * release pins its libvips), for the planner and the finalizer, which do not ship sharp but must
 * record what the packers do and compare it with the current version's record (a new sharp packs
 * everything again). test/packing/preprocess/bundled-sharp.test.ts fails when sharp is upgraded
 * without this.
 */
export const BUNDLED_SHARP = { sharp: '0.35.5', vips: '8.18.7' } as const;
