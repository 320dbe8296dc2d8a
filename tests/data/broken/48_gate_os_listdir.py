# mistake: listing the inputs with os
# expect: listdir()
# forbid: use another name
# fix: import os\nfiles = os.listdir(SRC) => files = listdir()
import os
files = os.listdir(SRC)
for name in files:
    if name.endswith('.csv'):
        print(name)
plt.plot([1, 2])
plt.savefig(OUT)
