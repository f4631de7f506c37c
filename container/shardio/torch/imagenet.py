"""ImageNet's per-channel mean and deviation (RGB, 0–1), the normalization torchvision's models expect."""

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
