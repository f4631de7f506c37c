import { BUNDLED_SHARP } from '../../../lambda/packing/preprocess/bundled-sharp';
import { loadSharp } from '../../../lambda/packing/preprocess/load-sharp';

describe('the sharp versions the planner and finalizer record', () => {
  test('are those of the sharp the packer loads (and ships)', () => {
    const { sharp, vips } = loadSharp().versions;
    expect({ sharp, vips }).toEqual(BUNDLED_SHARP);
  });
});
