import type * as LoadSharp from '../../../lambda/packing/preprocess/load-sharp';

describe('loadSharp', () => {
  test('without sharp installed, asking for preprocessing fails with what to install', () => {
    // GIVEN: sharp cannot be loaded, as where the optional dependency was left out
    let load: typeof LoadSharp | undefined;
    jest.isolateModules(() => {
      jest.doMock('sharp', () => {
        throw new Error("Cannot find module 'sharp'\nRequire stack: ...");
      });
      load = jest.requireActual<typeof LoadSharp>('../../../lambda/packing/preprocess/load-sharp');
    });


    try {
      // WHEN / THEN
      expect(() => load!.loadSharp()).toThrow(load!.SharpMissingError);
      expect(() => load!.loadSharp()).toThrow(/^image preprocessing needs the optional dependency sharp, which could not be loaded \(Cannot find module 'sharp'\); install it with `npm install sharp`/);
    } finally {
      jest.dontMock('sharp');
    }
  });

  test('with sharp installed, it is set up for one image per thread and no cache', () => {
    // WHEN
    const sharp = jest.requireActual<typeof LoadSharp>('../../../lambda/packing/preprocess/load-sharp').loadSharp();

    // THEN
    expect(sharp.concurrency()).toBe(1);
    expect(sharp.cache()).toMatchObject({ memory: { max: 0 }, items: { max: 0 }, files: { max: 0 } });
  });
});
