# mistake: importing the standard library's io, which jobs cannot use
# expect: io
# forbid: from scipy import io
# forbid: use another name
# fix: import io => import math
# fix: buf = io.StringIO(text) => buf = text.splitlines()
import io
text = 'a,b\n1,2\n3,4\n'
buf = io.StringIO(text)
plt.plot([1, 2])
plt.savefig(OUT)
