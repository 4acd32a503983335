"""jitensor's tests/programs: a tiny traindata.pt for train.py, in place of the one
generate_sine_wave.py writes (100 waves of 1000 points, which train.py's LSTMCell loop would
take minutes over). The same recipe at N=6 waves of L=40 points; the test runs
generate_sine_wave.py unchanged as well, then overwrites its output with this one."""
import numpy as np
import torch

np.random.seed(2)

T = 20
L = 40
N = 6

x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')
with open('traindata.pt', 'wb') as f:
    torch.save(data, f)
