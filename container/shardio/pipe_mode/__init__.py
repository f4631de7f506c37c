"""SageMaker Pipe mode: the channel's FIFOs, their host fan-out to many consumers and its checks."""
