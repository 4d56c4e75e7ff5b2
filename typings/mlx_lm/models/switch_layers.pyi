from mlx import nn

class QuantizedSwitchLinear(nn.Module):
    group_size: int
    bits: int
    mode: str
