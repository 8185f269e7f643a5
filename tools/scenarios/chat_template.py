"""A tokenizer with no chat template (built here from a tiny vocabulary, no download) asked to format a chat prompt:
transformers' own error, what a base model without one prints in an RL job's dataset step."""
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

raw = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
raw.pre_tokenizer = pre_tokenizers.Whitespace()
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]")
messages = [{"role": "user", "content": "What is 2 + 3?"}]
print(tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
