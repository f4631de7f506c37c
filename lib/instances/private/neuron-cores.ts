/**
 * NeuronCores a Trainium device exposes at the Neuron SDK's defaults, by instance family; Neuron
 * runs one training process per (logical) NeuronCore by default ("one Logical NeuronCore is
 * configured by a process"). trn1 and trn1n: two NeuronCore-v2 per Trainium (32 on a
 * trn1.32xlarge, 2 on a trn1.2xlarge); trn2: eight NeuronCore-v3 per Trainium2, paired by the
 * default Logical NeuronCore configuration (LNC=2) into four (64 ranks on a trn2.48xlarge).
 *
 * @see https://awsdocs-neuron.readthedocs-hosted.com/en/latest/frameworks/torch/torch-neuronx/programming-guide/training/pytorch-neuron-programming-guide.html
 * @see https://awsdocs-neuron.readthedocs-hosted.com/en/latest/training/best-practices.html
 */
const NEURON_CORES_PER_DEVICE: Readonly<Record<string, number>> = { trn1: 2, trn1n: 2, trn2: 4 };

/**
 * The NeuronCores of `trainiumDevices` devices on an instance type (`ml.<family>.<size>`): Neuron's
 * default for the families above; one per device for a family not known here (give `neuronCores`).
 */
export function defaultNeuronCores(instanceType: string, trainiumDevices: number): number {
  const family = instanceType.split('.')[1];
  return trainiumDevices * (NEURON_CORES_PER_DEVICE[family] ?? 1);
}
