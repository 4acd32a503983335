"""jitensor's tests/programs: a model.pt for generate.py without a run of main.py.

`python untrained_checkpoint.py --data DIR --model TYPE --save FILE [--emsize --nhid --nlayers]`
builds main.py's model (RNNModel or TransformerModel of model.py, with main.py's defaults for
what is not given) for DIR's corpus and saves it as main.py does, `torch.save(model, f)`, so
generate.py can be tried on its own: it loads the whole pickled module."""
import argparse

import data
import torch
from model import RNNModel, TransformerModel

parser = argparse.ArgumentParser()
parser.add_argument('--data', type=str, default='./data/synthetic')
parser.add_argument('--model', type=str, default='LSTM')
parser.add_argument('--emsize', type=int, default=200)
parser.add_argument('--nhid', type=int, default=200)
parser.add_argument('--nlayers', type=int, default=2)
parser.add_argument('--nhead', type=int, default=2)
parser.add_argument('--dropout', type=float, default=0.2)
parser.add_argument('--seed', type=int, default=1111)
parser.add_argument('--save', type=str, default='model.pt')
args = parser.parse_args()

torch.manual_seed(args.seed)
ntokens = len(data.Corpus(args.data).dictionary)
if args.model == 'Transformer':
    model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout)
else:
    model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout)
with open(args.save, 'wb') as f:
    torch.save(model, f)
print(f"saved an untrained {args.model} of {ntokens} tokens to {args.save}")
