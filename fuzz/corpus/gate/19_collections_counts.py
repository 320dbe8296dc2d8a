from collections import Counter, defaultdict
import itertools
import re
import matplotlib.pyplot as plt

text = "the quick brown fox jumps over the lazy dog the end"
words = re.findall(r"[a-z]+", text.lower())
counts = Counter(words)
by_len = defaultdict(list)
for w in words:
    by_len[len(w)].append(w)
pairs = list(itertools.combinations(sorted(set(words))[:4], 2))
print(pairs, dict(by_len))
labels, values = zip(*counts.most_common(6))
fig, ax = plt.subplots()
bars = ax.barh(labels, values, color='slateblue')
ax.bar_label(bars)
ax.invert_yaxis()
ax.set_title('Word counts')
plt.savefig(OUT)
