"""The log's format against the vectors the specifications and their reference code publish: RFC 6962's
Merkle tree heads and proofs (Certificate Transparency's test leaves), the signed-note example key and
signature of golang.org/x/mod/sumdb/note, tlog-tiles' paths and widths."""

from __future__ import annotations

import base64
import hashlib

import pytest

from service.transparency import merkle
from service.transparency.note import Checkpoint, NoteError, Signer, Verifier, open_checkpoint, open_note
from service.transparency.proof import TlogProof
from service.transparency.tiles import bundle, number_path, tile_path, tile_width, unbundle

CT_LEAVES = [bytes.fromhex(h) for h in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                         "606162636465666768696a6b6c6d6e6f")]  # fmt: skip
CT_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
CT_INCLUSION = {
    (0, 8): ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
             "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
             "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"],
    (5, 8): ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
             "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
             "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"],
}  # fmt: skip
CT_CONSISTENCY = {
    (2, 8): ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
             "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"],
    (6, 8): ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
             "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
             "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"],
}  # fmt: skip
GO_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
GO_NOTE = (
    GO_TEXT
    + "\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)


def in_memory(leaves: list[bytes]) -> merkle.Subtree:
    hashes = [merkle.leaf_hash(leaf) for leaf in leaves]

    def subtree(height: int, index: int) -> bytes:
        level = hashes[index << height : (index + 1) << height]
        assert len(level) == 1 << height
        while len(level) > 1:
            level = [merkle.node_hash(level[k], level[k + 1]) for k in range(0, len(level), 2)]
        return level[0]

    return subtree


def test_the_tree_heads_of_rfc_6962s_test_leaves() -> None:
    subtree = in_memory(CT_LEAVES)
    assert merkle.root(0, subtree).hex() == hashlib.sha256(b"").hexdigest()
    assert [merkle.root(n, subtree).hex() for n in range(1, 9)] == CT_ROOTS
    frontier = merkle.Frontier()
    for n, leaf in enumerate(CT_LEAVES, 1):
        frontier.append(merkle.leaf_hash(leaf))
        assert frontier.root().hex() == CT_ROOTS[n - 1]
        assert merkle.Frontier.of(n, subtree).root().hex() == CT_ROOTS[n - 1]


def test_the_published_proofs_are_made_and_checked() -> None:
    subtree = in_memory(CT_LEAVES)
    root8 = bytes.fromhex(CT_ROOTS[7])
    for (index, size), path in CT_INCLUSION.items():
        assert [h.hex() for h in merkle.inclusion_proof(index, size, subtree)] == path
        merkle.verify_inclusion(
            merkle.leaf_hash(CT_LEAVES[index]), index, size, [bytes.fromhex(h) for h in path], root8
        )
    for (old, new), path in CT_CONSISTENCY.items():
        assert [h.hex() for h in merkle.consistency_proof(old, new, subtree)] == path
        merkle.verify_consistency(old, new, bytes.fromhex(CT_ROOTS[old - 1]), root8, [bytes.fromhex(h) for h in path])


def test_every_proof_of_every_size_checks_and_a_changed_one_does_not() -> None:
    leaves = [bytes([k, k * 7 % 256]) for k in range(40)]
    subtree = in_memory(leaves)
    roots = [merkle.root(n, subtree) for n in range(41)]
    for size in range(1, 41):
        for index in range(size):
            path = merkle.inclusion_proof(index, size, subtree)
            merkle.verify_inclusion(merkle.leaf_hash(leaves[index]), index, size, path, roots[size])
            with pytest.raises(merkle.ProofError):
                merkle.verify_inclusion(merkle.leaf_hash(b"other"), index, size, path, roots[size])
            if path:
                with pytest.raises(merkle.ProofError):
                    merkle.verify_inclusion(merkle.leaf_hash(leaves[index]), index, size, path[:-1], roots[size])
        for old in range(0, size + 1):
            path = merkle.consistency_proof(old, size, subtree)
            merkle.verify_consistency(old, size, roots[old], roots[size], path)
            if 0 < old < size:
                forked = bytes(32) if roots[old] != bytes(32) else b"\x01" * 32
                with pytest.raises(merkle.ProofError):
                    merkle.verify_consistency(old, size, forked, roots[size], path)
                with pytest.raises(merkle.ProofError):
                    merkle.verify_consistency(old, size, roots[old], roots[size], path[:-1])


def test_the_signed_note_example_of_the_reference_code() -> None:
    signer = Signer.parse(GO_SKEY)
    assert signer.verifier.vkey == GO_VKEY
    assert signer.sign(GO_TEXT) == GO_NOTE  # Ed25519 is deterministic: the same bytes
    verifier = Verifier.parse(GO_VKEY)
    assert open_note(GO_NOTE, verifier) == GO_TEXT
    with pytest.raises(NoteError):
        open_note(GO_NOTE.replace("cryptography", "cryptographY"), verifier)
    other = Signer("PeterNeumann", bytes(32))
    with pytest.raises(NoteError, match="no signature"):  # the same name, another key: ignored, so none
        open_note(other.sign(GO_TEXT), verifier)
    with pytest.raises(NoteError):
        Verifier.parse(GO_VKEY.replace("c74f20a3", "c74f20a4"))


def test_a_checkpoint_is_its_three_lines_signed_by_the_origins_key() -> None:
    signer = Signer("example.com/log", bytes(range(32)))
    root = merkle.root(5, in_memory(CT_LEAVES))
    note = signer.sign(Checkpoint("example.com/log", 5, root).text())
    assert note.startswith(f"example.com/log\n5\n{base64.b64encode(root).decode()}\n\n— example.com/log ")
    opened = open_checkpoint(note, signer.verifier)
    assert (opened.size, opened.root) == (5, root)
    with pytest.raises(NoteError):
        open_checkpoint(note.replace("\n5\n", "\n6\n"), signer.verifier)


def test_tile_paths_and_widths_as_the_spec_spells_them() -> None:
    assert number_path(1234067) == "x001/x234/067"
    assert number_path(5) == "005"
    assert tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tile_path("entries", 3, 112) == "tile/entries/003.p/112"
    # "a tree of size 70,000 will be represented by 273 full level 0 tiles, one partial level 0 tile of
    # width 112, one full level 1 tile, one partial level 1 tile of width 17, and one partial level 2 tile of width 1"
    assert [tile_width(70000, 0, n) for n in (272, 273, 274)] == [256, 112, 0]
    assert [tile_width(70000, 1, n) for n in (0, 1, 2)] == [256, 17, 0]
    assert [tile_width(70000, 2, 0), tile_width(70000, 3, 0)] == [1, 0]
    assert [tile_width(256, 0, 0), tile_width(256, 1, 0), tile_width(256, 0, 1)] == [256, 1, 0]


def test_an_entry_bundle_is_uint16_length_prefixed_entries() -> None:
    entries = [b"", b"a", bytes(300)]
    data = bundle(entries)
    assert data[:5] == b"\x00\x00\x00\x01a" and data[5:7] == (300).to_bytes(2, "big")
    assert unbundle(data) == entries


def test_a_tlog_proof_is_written_and_read_as_the_spec_shows() -> None:
    signer = Signer("example.com/log", bytes(range(32)))
    subtree = in_memory(CT_LEAVES)
    note = signer.sign(Checkpoint("example.com/log", 8, merkle.root(8, subtree)).text())
    proof = TlogProof(5, tuple(merkle.inclusion_proof(5, 8, subtree)), note)
    text = proof.text()
    assert text.startswith("c2sp.org/tlog-proof@v1\nindex 5\n" + base64.b64encode(proof.path[0]).decode() + "\n")
    assert text.endswith("\n\n" + note)
    read = TlogProof.parse(text)
    assert read.verify(CT_LEAVES[5], signer.verifier).size == 8
    with pytest.raises(merkle.ProofError):
        read.verify(CT_LEAVES[4], signer.verifier)
    with pytest.raises(NoteError):
        read.verify(CT_LEAVES[5], Signer("example.com/log", bytes(32)).verifier)


@pytest.mark.parametrize("index", ["1" * 5000, str(1 << 64), "1" * 21])
def test_a_proof_s_index_past_a_uint64_is_a_proof_error(index: str) -> None:
    """Before, 5,000 digits raised Python's own ValueError (past 4,300 digits), which no caller caught:
    a receipt carrying such a proof stopped a month's run."""
    signer = Signer("example.com/log", bytes(range(32)))
    note = signer.sign(Checkpoint("example.com/log", 8, merkle.root(8, in_memory(CT_LEAVES))).text())
    with pytest.raises(merkle.ProofError):
        TlogProof.parse(f"c2sp.org/tlog-proof@v1\nindex {index}\n\n{note}")
    assert TlogProof.parse(f"c2sp.org/tlog-proof@v1\nindex {(1 << 64) - 1}\n\n{note}").index == (1 << 64) - 1
