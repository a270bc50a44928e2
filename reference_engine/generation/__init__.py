"""The generation loop: one choice at a time, token by token, with stop handling and logprobs.

Layers, in the order a sampled token passes through them:

1. ``token_stops`` holds back tokens that may start a ``stop_tokens`` sequence;
2. the tokenizer's ``IncrementalDecoder`` turns bytes into whole characters;
3. ``text_stops`` holds back text that may start a stop string and cuts at a match;
4. ``offsets`` attaches each token's logprob entry to the chunk its first character is in.
"""
