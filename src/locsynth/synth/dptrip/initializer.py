"""The trip initializer: a VAE over one-hot (source, destination, hour) (paper 004 §7.3.1, §8.3.1,
Figure 1).

Encoder: the one-hot input of 2 |L| + 24 dimensions (computed as embeddings: the same function),
a dense layer of 100 with ReLU, a dense layer of 100 without activation, then mu and
log sigma^2 of a 50-dimensional normal. Decoder:
z, a dense layer of 100 with ReLU, and three parallel softmax heads (source |L|, destination |L|,
hour 24). Loss (Kingma and Welling's ELBO, the paper's [29]; weighting as the authors' code,
REFERENCE.md): the mean of the three cross-entropies plus the KL divergence to N(0, I) averaged
over the latent dimensions,

.. math::
    \\ell(x) = \\tfrac13 \\sum_{k \\in \\{src, dst, t\\}} -\\log p_k(x_k \\mid z)
               + \\tfrac1{50} \\sum_j \\tfrac12 (\\mu_j^2 + \\sigma_j^2 - \\log \\sigma_j^2 - 1),
    \\quad z = \\mu + \\sigma \\odot \\xi,\\ \\xi \\sim N(0, I).

Generation decodes z ~ N(0, I) with NumPy from the trained weights (:func:`decode`), so that a
seed fixes it and a loaded model gives the same trips.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

HIDDEN = 100
LATENT = 50
HOURS = 24


class TripVAE(nn.Module):
    """The VAE of paper 004 Figure 1 over ``n_cells`` locations and 24 hours."""

    def __init__(self, n_cells: int, hidden: int = HIDDEN, latent: int = LATENT, hours: int = HOURS):
        super().__init__()
        self.n_cells, self.hours = int(n_cells), int(hours)
        # the first dense layer on the one-hot input, as one embedding per input block plus a
        # bias: the same function and the same per-example gradient norm, without multiplying
        # (2 |L| + 24)-wide one-hot rows
        self.enc1_source = nn.Embedding(n_cells, hidden)
        self.enc1_destination = nn.Embedding(n_cells, hidden)
        self.enc1_hour = nn.Embedding(hours, hidden)
        self.enc1_bias = nn.Embedding(1, hidden)
        self.enc2 = nn.Linear(hidden, hidden)                 # linear activation (§8.3.1)
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Linear(latent, hidden)
        self.head_source = nn.Linear(hidden, n_cells)
        self.head_destination = nn.Linear(hidden, n_cells)
        self.head_hour = nn.Linear(hidden, hours)

    def first_layer(self, source: torch.Tensor, destination: torch.Tensor, hour: torch.Tensor) -> torch.Tensor:
        """W x + b for the one-hot x of (source, destination, hour), shape (batch, hidden)."""
        return (self.enc1_source(source) + self.enc1_destination(destination) + self.enc1_hour(hour)
                + self.enc1_bias(torch.zeros_like(source)))

    def encode(self, source: torch.Tensor, destination: torch.Tensor, hour: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """mu and log sigma^2 of q(z | x), each of shape (batch, latent)."""
        h = self.enc2(F.relu(self.first_layer(source, destination, hour)))
        return self.mu(h), self.logvar(h)

    def decode_logits(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = F.relu(self.dec(z))
        return self.head_source(h), self.head_destination(h), self.head_hour(h)

    def forward(self, source: torch.Tensor, destination: torch.Tensor, hour: torch.Tensor) -> torch.Tensor:
        """The per-example loss (module docstring), shape (batch,)."""
        mu, logvar = self.encode(source, destination, hour)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)       # reparametrization
        ls, ld, lh = self.decode_logits(z)
        reconstruction = (F.cross_entropy(ls, source, reduction="none")
                          + F.cross_entropy(ld, destination, reduction="none")
                          + F.cross_entropy(lh, hour, reduction="none")) / 3
        kl = 0.5 * (mu.pow(2) + logvar.exp() - logvar - 1).mean(dim=1)
        return reconstruction + kl


def decoder_arrays(vae: TripVAE) -> dict[str, np.ndarray]:
    """The decoder's weights as float32 arrays (what generation needs)."""
    state = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in vae.state_dict().items()}
    return {k: state[k] for k in state if k.startswith(("dec.", "head_"))}


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def head_probabilities(decoder: dict[str, np.ndarray], z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """p(source | z), p(destination | z), p(hour | z): arrays of shape (n, |L|), (n, |L|), (n, 24)."""
    h = np.maximum(z.astype(np.float32) @ decoder["dec.weight"].T + decoder["dec.bias"], 0)
    return tuple(_softmax(h @ decoder[f"head_{k}.weight"].T + decoder[f"head_{k}.bias"])
                 for k in ("source", "destination", "hour"))


def _within(p: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Each row of probabilities over locations restricted to the ``allowed`` ones, renormalized."""
    p = p * allowed
    total = p.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), allowed / allowed.sum())


def decode(decoder: dict[str, np.ndarray], n: int, rng: np.random.Generator, how: str = "argmax",
           allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` draws of (source, destination, hour): z ~ N(0, I), then each head's argmax (the
    authors' code, REFERENCE.md) or a draw from each head's softmax (``how="sample"``); with
    ``allowed`` (bool per location: a public domain) the two location heads conditioned on it."""
    z = rng.standard_normal((n, decoder["dec.weight"].shape[1]))
    heads = head_probabilities(decoder, z)
    if allowed is not None:
        heads = tuple(_within(p, allowed) for p in heads[:2]) + heads[2:]
    if how == "argmax":
        return tuple(p.argmax(axis=1).astype(np.int64) for p in heads)
    u = rng.random((3, n, 1))
    return tuple(np.minimum((p.cumsum(axis=1) < u[k]).sum(axis=1), p.shape[1] - 1).astype(np.int64)
                 for k, p in enumerate(heads))
