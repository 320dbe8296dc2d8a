# mistake: walking the inputs with os.walk
# expect: listdir()
# forbid: use another name
# fix: import os\nfiles = [f for _, _, fs in os.walk(SRC) for f in fs] => files = walkfiles()
import os
files = [f for _, _, fs in os.walk(SRC) for f in fs]
for name in files:
    if name.endswith('.csv'):
        print(name)
plt.plot([1, 2])
plt.savefig(OUT)
