# mistake: listing the inputs with os.scandir
# expect: listdir()
# forbid: use another name
# fix: import os\nfiles = [e.name for e in os.scandir(SRC)] => files = listdir()
import os
files = [e.name for e in os.scandir(SRC)]
for name in files:
    if name.endswith('.csv'):
        print(name)
plt.plot([1, 2])
plt.savefig(OUT)
