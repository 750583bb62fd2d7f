"""`analyze` on the models people bring: an LSTM language model, a GQA block, a top-2 mixture of
experts, an HF-style model with keyword inputs. Each total is the hand count from the catalogue
(within 3 %, most exact), and no computing call is 0 in silence."""

from __future__ import annotations

import json

import pytest

from gpuconcepts import formulas as f
from gpuconcepts.analyze import make_inputs, parse_input

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_analyze import run  # fixed peaks: the counts matter, not this machine's speed


def close(total: int, hand: int) -> bool:
    return abs(total - hand) <= 0.03 * hand


def zero_flop_types(report) -> set[str]:
    """The types of the rows counted 0 FLOPs: each test lists the ones that truly do none."""
    return {layer.type for layer in report.layers if layer.flops == 0}


# -- an LSTM language model ---------------------------------------------------------------------
class LstmLM(nn.Module):
    def __init__(self, vocab: int = 500, d: int = 32, hidden: int = 48) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids):
        return self.head(self.lstm(self.embed(ids))[0])


def test_an_lstm_language_model_is_counted_by_its_formulas():
    report = run(LstmLM(), torch.randint(0, 500, (4, 10)))
    lstm = next(layer for layer in report.layers if layer.type == "LSTM")
    first = f.lstm_flops(B=4, S=10, d_in=32, d_h=48)
    second = f.lstm_flops(B=4, S=10, d_in=48, d_h=48)
    assert (lstm.flops, lstm.flops_source) == (first + second, "lstm_flops")
    assert lstm.counter_flops == 0  # FlopCounterMode has no rule for the CPU LSTM kernel
    # by hand, from the shapes: 4 gates x 2 FLOPs x (d_in + h) x h per step and sequence
    rows = 4 * 10  # batch x steps
    hand = rows * 4 * 2 * (32 + 48) * 48 + rows * 4 * 2 * (48 + 48) * 48 + rows * 2 * 48 * 500
    assert hand == 4_623_360
    assert close(report.total_flops, hand)
    assert report.total_flops == hand  # exact, in fact
    assert zero_flop_types(report) == {"Embedding"}  # a gather: no arithmetic
    assert not report.all_warnings


def test_gru_and_bidirectional_layers():
    gru = nn.GRU(16, 24, num_layers=2, bidirectional=True)
    (row,) = run(gru, torch.randn(7, 3, 16)).layers  # (S, B, d_in): not batch-first
    first = f.gru_flops(B=3, S=7, d_in=16, d_h=24)
    second = f.gru_flops(B=3, S=7, d_in=48, d_h=24)
    assert (row.flops, row.flops_source) == (2 * (first + second), "gru_flops")


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
def test_an_lstm_with_projections_falls_back_to_flop_counter_mode():
    (row,) = run(nn.LSTM(16, 32, proj_size=8, batch_first=True), torch.randn(2, 5, 16)).layers
    # no catalogue formula (its recurrent width is 8, not 32); PyTorch's fallback path is
    # made of matmuls that FlopCounterMode counts
    assert row.flops == row.counter_flops > 0
    assert row.flops_source == "FlopCounterMode"


def test_a_layer_that_computes_but_is_counted_zero_is_a_warning_row():
    class Pair(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bilinear, self.act = nn.Bilinear(16, 8, 4), nn.ReLU()

        def forward(self, x, y):
            return self.act(self.bilinear(x, y))

    report = run(Pair(), torch.randn(2, 16), torch.randn(2, 8))
    bilinear = report.layers[0]
    assert bilinear.flops == 0  # FlopCounterMode has no rule for bilinear
    assert bilinear.warning == (
        "Bilinear computes (its weight is 4×16×8) but was counted 0 FLOPs: no catalogue formula "
        "fits it and FlopCounterMode has no rule for the kernel it ran, so the total is short "
        "by its FLOPs"
    )
    assert report.layers[1].warning == ""  # a ReLU computes nothing worth a count
    text = report.text()
    assert text.splitlines()[1].split()[3] == "0!"  # the row says it
    assert "Warning: row 1: Bilinear computes" in text
    assert json.loads(report.to_json())["warnings"] == [f"row 1: {bilinear.warning}"]


# -- attention whose queries and keys differ -----------------------------------------------------
class GqaBlock(nn.Module):
    """64 queries against 257 cached keys; 8 query heads share 2 key/value heads."""

    def __init__(self, d: int = 128, heads: int = 8, n_kv: int = 2) -> None:
        super().__init__()
        self.heads, self.n_kv, self.d_head = heads, n_kv, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.kv = nn.Linear(d, 2 * n_kv * self.d_head, bias=False)
        self.out = nn.Linear(d, d, bias=False)

    def forward(self, x, memory):
        B, S_q, d = x.shape
        S_kv = memory.shape[1]
        q = self.q(x).view(B, S_q, self.heads, self.d_head).transpose(1, 2)
        k, v = (
            t.view(B, S_kv, self.n_kv, self.d_head).transpose(1, 2)
            for t in self.kv(memory).chunk(2, dim=-1)
        )
        y = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return self.out(y.transpose(1, 2).reshape(B, S_q, d))


def test_grouped_query_attention_with_64_queries_against_257_keys():
    x, memory = torch.randn(2, 64, 128), torch.randn(2, 257, 128)
    report = run(GqaBlock(), x, memory)
    attention = next(layer for layer in report.layers if "attention" in layer.type)
    assert attention.flops == f.attention_flops_general(B=2, S_q=64, S_kv=257, d=128)
    assert attention.flops_source == "attention_flops_general"
    assert attention.counter_flops == 0  # the CPU flash path: FlopCounterMode's 0
    assert attention.bytes == f.attention_bytes_general(
        B=2, S_q=64, S_kv=257, d=128, n_kv=2, d_head=16, s=4
    )
    # by hand, from the shapes (2 FLOPs per multiply-add)
    q_and_out = 2 * (2 * 2 * 64 * 128 * 128)  # 2 x 64 rows, 128 -> 128, twice
    k_and_v = 2 * 2 * 257 * 128 * (2 * 2 * 16)  # 2 x 257 rows, 128 -> 2 heads x 16, twice
    scores_and_values = 2 * (2 * 2 * 8 * 64 * 257 * 16)  # 8 query heads, 64 x 257 of 16 each
    hand = q_and_out + k_and_v + scores_and_values
    assert hand == 33_652_736
    assert close(report.total_flops, hand)
    assert report.total_flops == hand
    assert zero_flop_types(report) == set()
    assert not report.all_warnings


def test_a_decode_step_and_causal_attention_of_another_length():
    q, k = torch.randn(1, 4, 1, 16), torch.randn(1, 4, 100, 16)

    class Decode(nn.Module):
        def forward(self, q, k, causal=False):
            return F.scaled_dot_product_attention(q, k, k, is_causal=causal)

    (row,) = run(Decode(), q, k).layers
    assert row.flops == f.attention_decode_flops(B=1, S=100, d=64)
    # a causal mask of another shape is aligned top left by PyTorch: no formula, said
    (row,) = run(Decode(), torch.randn(1, 4, 8, 16), k, causal=True).layers
    assert row.flops == 0
    assert row.warning.startswith("Decode computes (it calls F.scaled_dot_product_attention) but")

    class Outside(nn.Module):  # the same call outside any leaf: a functional row of its own
        def __init__(self) -> None:
            super().__init__()
            self.inner = Decode()
            self.proj = nn.Linear(16, 16)

        def forward(self, q, k):
            return self.proj(F.scaled_dot_product_attention(q, k, k, is_causal=True))

    report = run(Outside(), torch.randn(1, 4, 8, 16), k)
    assert report.layers[0].warning.startswith(
        "F.scaled_dot_product_attention computes (it is F.scaled_dot_product_attention) but"
    )


def test_multihead_cross_attention():
    mha = nn.MultiheadAttention(32, 4, batch_first=True)
    q, kv = torch.randn(2, 5, 32), torch.randn(2, 9, 32)
    (row,) = run(mha, q, kv, kv).layers
    expected = (
        2 * f.mlp_flops(B=10, d_in=32, d_out=32)
        + 2 * f.mlp_flops(B=18, d_in=32, d_out=32)
        + f.attention_flops_general(B=2, S_q=5, S_kv=9, d=32)
    )
    assert (row.flops, row.flops_source) == (expected, "mlp_flops × 4 + attention_flops_general")


# -- a top-2 mixture of experts through torch._grouped_mm ------------------------------------------
class GroupedExperts(nn.Module):
    """Experts as one weight tensor each, run by one grouped matmul (as torchtitan does)."""

    def __init__(self, experts: int = 4, d: int = 32, d_ff: int = 64) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(experts, d, d_ff) / d**0.5)
        self.w2 = nn.Parameter(torch.randn(experts, d_ff, d) / d_ff**0.5)

    def forward(self, x, offsets):
        hidden = F.silu(torch._grouped_mm(x, self.w1, offs=offsets))
        return torch._grouped_mm(hidden, self.w2, offs=offsets)


class TopTwoMoE(nn.Module):
    def __init__(self, experts: int = 4, d: int = 32, d_ff: int = 64) -> None:
        super().__init__()
        self.experts = experts
        self.router = nn.Linear(d, experts, bias=False)
        self.grouped = GroupedExperts(experts, d, d_ff)

    def forward(self, x):
        weights, chosen = self.router(x).softmax(-1).topk(2, dim=-1)
        order = chosen.flatten().argsort()
        rows = x.repeat_interleave(2, dim=0)[order]
        counts = torch.bincount(chosen.flatten(), minlength=self.experts)
        out = self.grouped(rows, counts.cumsum(0).to(torch.int32))
        combined = torch.zeros_like(rows).index_copy(0, order, out)
        return (combined.view(-1, 2, x.shape[-1]) * weights[..., None]).sum(1)


def test_a_top_two_mixture_of_experts_counts_its_grouped_matmuls():
    torch.manual_seed(0)
    tokens = 16
    report = run(TopTwoMoE(), torch.randn(tokens, 32))
    experts = next(layer for layer in report.layers if layer.type == "GroupedExperts")
    one = f.grouped_mm_flops(n_tokens=tokens, top_k=2, d_in=32, d_out=64)
    other = f.grouped_mm_flops(n_tokens=tokens, top_k=2, d_in=64, d_out=32)
    assert experts.flops == one + other
    assert experts.counter_flops == 0
    assert experts.flops_source == "grouped_mm_flops"
    # by hand, from the shapes: the router on 16 tokens, then 2 x 16 routed rows through
    # each expert's 32 -> 64 and 64 -> 32 (2 FLOPs per multiply-add)
    hand = 2 * tokens * 32 * 4 + 2 * (2 * tokens) * 32 * 64 + 2 * (2 * tokens) * 64 * 32
    assert hand == 266_240
    assert close(report.total_flops, hand)  # the combine's element-wise products are the rest
    computing = {"Linear", "GroupedExperts"}
    assert zero_flop_types(report).isdisjoint(computing)  # the rest route, gather and add
    assert not report.all_warnings


# -- inputs as people pass them ----------------------------------------------------------------
class KeywordModel(nn.Module):
    """An HF-style encoder: ids and a mask by keyword, token types as a third table."""

    def __init__(self, vocab: int = 1000, d: int = 32) -> None:
        super().__init__()
        self.words = nn.Embedding(vocab, d)
        self.types = nn.Embedding(2, d)
        self.attention = nn.MultiheadAttention(d, 4, batch_first=True)
        self.head = nn.Linear(d, 3)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        x = self.words(input_ids)
        if token_type_ids is not None:
            x = x + self.types(token_type_ids)
        hidden, _ = self.attention(x, x, x, key_padding_mask=attention_mask == 0)
        return self.head(hidden)


def test_keyword_inputs_reach_the_forward_and_are_counted():
    ids = torch.randint(0, 1000, (2, 12))
    report = run(KeywordModel(), input_ids=ids, attention_mask=torch.ones(2, 12))
    mha = next(layer for layer in report.layers if layer.type == "MultiheadAttention")
    # by hand, from the shapes: 24 tokens through Q, K, V and the output (32 -> 32), the
    # scores and the weighted values (2 x 12 x 12 x 32 per sequence, each twice), the head
    projections = 4 * 2 * 24 * 32 * 32
    attention = 2 * (2 * 2 * 12 * 12 * 32)
    head = 2 * 24 * 32 * 3
    assert projections + attention + head == 238_080
    assert mha.flops == projections + attention
    assert close(report.total_flops, projections + attention + head)
    assert zero_flop_types(report) == {"Embedding", "Tensor.__eq__"}  # the mask's comparison
    assert not report.all_warnings


def test_integer_inputs_index_the_table_that_reads_them_and_a_mask_is_ones():
    model = KeywordModel()
    specs = [
        parse_input(text)
        for text in (
            "input_ids=4x64:int64",
            "token_type_ids=4x64:int64",
            "attention_mask=4x64:int64",
        )
    ]
    _, kwargs = make_inputs(model, specs, "cpu", None)
    ids, types, mask = kwargs["input_ids"], kwargs["token_type_ids"], kwargs["attention_mask"]
    assert 100 < int(ids.max()) < 1000  # the word table's rows, not the smallest table's
    assert set(types.unique().tolist()) == {0, 1}
    assert bool((mask == 1).all())  # no embedding reads it: a mask that hides nothing
    ranged = make_inputs(model, [parse_input("input_ids=2x8:int64:5..6")], "cpu", None)[1]
    assert set(ranged["input_ids"].unique().tolist()) <= {5, 6}
    ones = make_inputs(model, [parse_input("ones:3x4")], "cpu", None)[0][0]
    assert ones.dtype == torch.float32
    assert bool((ones == 1).all())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1x2:int64:9..3", "the range's LOW is above its HIGH"),
        ("1x2:int64:0.5..3", "an int64 range is whole numbers"),
        ("1x2:int64:a..b", "a range is LOW..HIGH"),
        ("2bad=1x2", "'2bad' is not a keyword name"),
        ("device=1x2", "device is one of analyze's own options"),
        ("ones:1x2:int64:0..1", "too many ':' parts"),
        ("ones:fourx2", "a shape is positive integers joined by x"),
        # ranges torch.randint cannot draw from (each was a RuntimeError or ValueError traceback)
        ("1x2:int32:0..1099511627776", "an int32 range lies within -2147483648..2147483646"),
        ("1x2:bool:0..5", "a bool range lies within 0..1"),
        ("1x2:int64:0..9223372036854775807", "an int64 range lies within"),
        ("1x2:float32:0..1" + "9" * 40, "a range is LOW..HIGH"),  # was OverflowError: int too big
    ],
)
def test_bad_inputs_name_the_rule(text, message):
    with pytest.raises(ValueError, match=r"^--input ") as caught:
        parse_input(text)
    assert message in str(caught.value)


def test_inputs_that_would_not_fit_are_refused_before_anything_is_allocated(monkeypatch):
    """200000000x8 floats (6 GiB) passed the old check (under the 22 GiB free), but the
    analysis holds its inputs about four times over: 640 MB into one Linear peaked at 2.3 GB,
    so 6 GiB heads for about 22 GiB."""
    from gpuconcepts.analysis.inputs import HELD_COPIES

    needed = 1000 * 8 * 4
    monkeypatch.setattr("gpuconcepts.measure.free_memory_bytes", lambda _: HELD_COPIES * needed - 1)
    with pytest.raises(ValueError, match=r"^out of memory for the inputs: they need 31.25 KiB, "):
        make_inputs(nn.Linear(8, 8), [parse_input("1000x8")], "cpu", None)
    monkeypatch.setattr("gpuconcepts.measure.free_memory_bytes", lambda _: HELD_COPIES * needed)
    assert make_inputs(nn.Linear(8, 8), [parse_input("1000x8")], "cpu", None)[0][0].shape == (
        1000,
        8,
    )


def test_running_out_of_memory_while_drawing_the_inputs_is_one_line(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory: "
            "you tried to allocate 6400000000 bytes. Error code 12 (Cannot allocate memory)"
        )

    monkeypatch.setattr(torch, "randn", refuse)
    with pytest.raises(ValueError, match=r"^out of memory in the inputs: it needed 5.96 GiB but"):
        make_inputs(nn.Linear(8, 8), [parse_input("4x8")], "cpu", None)


# -- views move nothing ------------------------------------------------------------------------
class Permute(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1)


def test_views_identities_and_eval_dropout_are_not_traffic():
    model = nn.Sequential(
        nn.Conv2d(3, 8, 1, bias=False),
        nn.Dropout(0.5),
        nn.Identity(),
        Permute(),
        nn.Flatten(),  # a copy of the permuted, non-contiguous tensor: real traffic
        nn.ReLU(inplace=True),  # writes its input: traffic too
    )
    report = run(model, torch.randn(2, 3, 4, 4))
    assert [layer.type for layer in report.layers] == ["Conv2d", "Flatten", "ReLU"]
    assert report.views == ("1 (Dropout)", "2 (Identity)", "3 (Permute)")
    assert report.layers[2].bytes == 2 * (2 * 8 * 4 * 4 * 4)  # read once, written back in place
    said = " ".join(report.text().split())
    assert "only view or pass on their input move nothing and are not rows: 1 Dropout, 1" in said
