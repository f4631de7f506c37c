"""A small box and mask model for train.py: a convolutional encoder at a quarter of the image's
resolution, with three heads in the manner of CenterNet (Zhou et al., "Objects as Points", 2019):
a heat map of the boxes' centres, each box's width and height at its centre, and the foreground
mask. Small enough to train on a CPU in a test; swap in torchvision's Mask R-CNN for real work."""
from typing import List, Tuple

import torch
from torch import nn
from torch.nn import functional

STRIDE = 4  # the heads' cells are STRIDE × STRIDE pixels


def _block(inputs: int, outputs: int, stride: int) -> nn.Module:
    return nn.Sequential(nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(outputs),
                         nn.ReLU(inplace=True))


class BoxMaskNet(nn.Module):
    """Images (N, 3, S, S) → centre logits (N, 1, S/4, S/4), box sizes (N, 2, S/4, S/4) as fractions of
    the image, mask logits (N, 1, S, S)."""

    def __init__(self, width: int = 32) -> None:
        super().__init__()
        self.encoder = nn.Sequential(_block(3, width, 2), _block(width, width * 2, 2), _block(width * 2, width * 2, 1),
                                     _block(width * 2, width * 2, 1))
        self.centres = nn.Conv2d(width * 2, 1, 1)
        self.sizes = nn.Conv2d(width * 2, 2, 1)
        self.mask = nn.Conv2d(width * 2, 1, 1)
        nn.init.constant_(self.centres.bias, -2.0)  # few cells hold a centre: start the heat map low

    def forward(self, images: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        features = self.encoder(images)
        mask = functional.interpolate(self.mask(features), size=images.shape[-2:], mode="bilinear", align_corners=False)
        return self.centres(features), self.sizes(features).sigmoid(), mask


def box_mask_loss(outputs: Tuple[torch.Tensor, torch.Tensor, torch.Tensor], boxes: List[torch.Tensor],
                  masks: torch.Tensor) -> torch.Tensor:
    """The three heads' losses, summed: the centre cells (BCE), the sizes at the centres (L1) and the
    foreground (BCE). `boxes`: per image a (n, 4) tensor of [x0, y0, x1, y1] in pixels, n from 0 up;
    `masks`: (N, S, S), 1 on a pedestrian."""
    centres, sizes, mask = outputs
    side = masks.shape[-1]
    target = torch.zeros_like(centres)
    size_loss, count = centres.new_zeros(()), 0
    for image, image_boxes in enumerate(boxes):
        if len(image_boxes) == 0:
            continue
        cells = ((image_boxes[:, :2] + image_boxes[:, 2:]) / 2 / STRIDE).long().clamp(0, centres.shape[-1] - 1)
        target[image, 0, cells[:, 1], cells[:, 0]] = 1.0
        wanted = (image_boxes[:, 2:] - image_boxes[:, :2]) / side
        size_loss = size_loss + functional.l1_loss(sizes[image, :, cells[:, 1], cells[:, 0]].t(), wanted, reduction="sum")
        count += len(image_boxes)
    positives = target.sum().clamp(min=1.0)
    centre_loss = functional.binary_cross_entropy_with_logits(centres, target, pos_weight=(target.numel() - positives) / positives)
    mask_loss = functional.binary_cross_entropy_with_logits(mask[:, 0], masks)
    return centre_loss + size_loss / max(count, 1) + mask_loss
